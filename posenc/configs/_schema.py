"""The model-type table's entries, typed: what each key of ``model_types.json`` means and where it comes from.

``model_types.json`` holds one `ModelTypeEntry` per model type the pinned ``transformers`` registers
(`ModelTypeTable`). The generator (``tools/rope_model_types/``) derives every key from
transformers' own code: it builds the model type's config class on probe values and reads back what
the class made, runs its rotary module against posenc's rotation, and reads its ``modeling_*.py``
source; it records behaviour, never model names. An absent key means "nothing to record" (the
common case: a class that keeps what a config gives). ``tests/test_config_schema.py`` checks that
every entry of the committed table has only these keys, each of its type.

In the source locators below, "the config class" is the model type's ``Configuration*`` class,
"the modeling file" its ``transformers/models/<name>/modeling_<name>.py``, and "the rope utils"
``transformers/modeling_rope_utils.py`` (transformers 5.23.0, as pinned).
"""

from __future__ import annotations

from typing import Literal, TypedDict

from posenc.configs._schema_layers import GivenList, LayerPattern, LayerTypesFrom, NopePattern, Scalar
from posenc.configs._schema_rotations import HeadSlice, RopeSwitch, ValueFlag

__all__ = ["LayerPattern", "ModelTypeEntry", "ModelTypeTable", "NopePattern"]

Layout = Literal["half", "interleaved"]
#: The value of one key of a flat ``rope_parameters`` set (``mrope_section`` is a list).
ParamValue = str | int | float | bool | list[int]


class LayoutFlag(TypedDict):
    """A layout chosen by a boolean config key: the modeling file branches on ``config.rope_interleave``
    and calls ``apply_rotary_pos_emb_interleave`` or ``apply_rotary_pos_emb`` (DeepSeek-V3, ...).

    Attributes:
        key: the flag (``"rope_interleave"``).
        default: the config class's default for it.
        true, false: the layout each branch computes (probed), None where the probe matched neither.
    """

    key: str
    default: bool
    true: Layout | None
    false: Layout | None


class KeyDefault(TypedDict):
    """A top-level key and the value the config class uses without it.

    Attributes:
        key: the key (None where no top-level key sets it: the default is fixed).
        default: the class's value without the key.
    """

    key: str | None
    default: float


class HeadDimDefault(TypedDict):
    """A key that gives one layer type's head width, and the width without it.

    Attributes:
        key: the key (Gemma 4's ``global_head_dim``); ``default``: the class's width without it.
    """

    key: str
    default: int


class _HeadDimBase(TypedDict):
    key: str
    over_head_dim: bool


class HeadDimFrom(_HeadDimBase, total=False):
    """The key the config class copies into ``head_dim`` (DeepSeek's MLA: ``qk_rope_head_dim``), or
    the keys it adds into it (Mistral 4: ``qk_nope_head_dim + qk_rope_head_dim``).

    Attributes:
        key: the key (with ``plus``, the first of the sum).
        plus: the other keys of a sum: ``head_dim`` is ``key``'s value plus theirs
            (configuration_mistral4.py:131); left out where the class copies ``key`` alone.
        over_head_dim: whether it wins over a ``head_dim`` the config also gives (Mistral 4's does
            not: the ``head_dim`` given is set after its sum, configuration_utils.py:500-504).
        hidden_factor: where the class computes the key itself when the config gives none, as
            ``hidden_factor * hidden_size // num_attention_heads`` (Zamba2's ``attention_head_dim``:
            2); left out for the usual ``hidden_size // num_attention_heads``.
    """

    plus: list[str]
    hidden_factor: int


class FlatLanding(TypedDict):
    """Where a flat ``rope_scaling`` (or ``rope_parameters``) lands in a class with one set per layer
    type (Gemma 3: only on full attention).

    Attributes:
        layer_types: the layer types whose set it updates (the others keep their defaults).
        theta: the layer types where a ``rope_theta`` inside it lands, winning over the base keys.
    """

    layer_types: list[str]
    theta: list[str]


class WindowSwitch(TypedDict):
    """A boolean key without which the config class drops ``sliding_window`` (Qwen2's
    ``use_sliding_window``: ``sliding_window if use_sliding_window else None``), found by building the
    class with each boolean window key flipped.

    Attributes:
        key: the switch; ``default``: its class default; ``off``: what the class stores as the window
            when it is off (None, or Qwen2-MoE's 0).
    """

    key: str
    default: bool
    off: int | None


class WindowLayers(TypedDict):
    """Which layers the config class names ``sliding_attention`` once the window is on: layer ``i``
    with ``i >= m`` (``compare`` ``">="``, Qwen2 and Qwen3) or ``i < m`` (``"<"``, Qwen2-MoE),
    every k-th (after ``offset``), ``m`` the value of ``key`` (``max_window_layers``; ``default`` its
    class default); fitted at several layer counts and values of ``m``."""

    key: str
    default: int
    compare: Literal[">=", "<"]
    k: int
    offset: int


class _MropeDemand(TypedDict):
    default: list[int] | None
    sum: bool


class MropeSections(_MropeDemand, total=False):
    """What the rotary module of an M-RoPE model demands of ``rope_parameters['mrope_section']``,
    found by running it (GLM-4V's splits its frequencies by the sections, modeling_glm4v.py:481-486).

    Attributes:
        default: the sections it uses when the config gives none (None: it fails without them,
            HunYuan-VL's ``len(self.mrope_section)``, modeling_hunyuan_vl.py:106, 131).
        sum: whether it fails unless the sections add up to its number of rungs (half the rotated width).
        paired: whether it fails unless the first two of three sections are equal and the last is
            not empty (Ernie 4.5 VL's ``torch.stack``, modeling_ernie4_5_vl_moe.py:95-99, 123-126).
    """

    paired: bool


class ModelTypeEntry(TypedDict, total=False):
    """One model type's row of the table: what differs, for its RoPE, from what posenc assumes.

    Attributes:
        rope: False where posenc finds no rotary settings to read (no ``rope_parameters`` on the
            text config, or no rotary module in the modeling file); absent otherwise.
        rotation_calls: with ``rope`` False, the rotation functions the modeling file still calls
            (``apply_rotary_pos_emb``, ...: a vision or audio encoder that rotates), so that posenc
            refuses the model type by name instead of saying it has no RoPE.
        rotating_parts: where the entry (or its text model's) says the model uses no RoPE, the
            sub-configs whose own entry rotates, by dotted key (``"vlm_config.text_config"``) ->
            their model type, followed three levels down through the config class's
            ``sub_configs_defaults`` (pi0's Gemma, CHMv2's DINOv3 backbone); posenc refuses the
            model type by name and points to those sub-configs. Also where the entry's settings reach
            no rotary module of its modeling file (BLT: its four parts rotate, each with its own config).
        rotates_elsewhere: with ``rotation_calls``, the classes of the modeling file that rotate, where
            the model transformers builds from this config (``AutoModel.from_config``) uses none of
            them (GLM-5-Next's and Inkling 2's text models: only their vision towers rotate); posenc
            says the model type's own attention uses no RoPE and names those classes.
        rotation_off: with ``rotates_elsewhere``, the classes the model builds with their rotation
            switched off, each with the attribute left None (Moshi's depth decoder builds
            MoshiAttention with use_rope False, so its rotary_emb is None); named in the refusal.
        rope_parameters_given_only: with ``rotation_calls``, the config class fills no rope parameters
            (an empty ``rope_parameters`` at its defaults) while its model rotates with those a config
            gives (Cohere Compass's text model, per layer type: modeling_cohere_compass.py:67-90): no
            defaults for the generator to probe; posenc refuses it saying so.
        text_model_type: for a wrapper (a vision-language config, ...), the model type of its text
            config (``get_text_config(decoder=True)``), whose entry is read instead.
        text_model_type_aliases: names the wrapper's config class accepts for its text model's
            type besides the registered ones, and the type it builds (Kimi K2.5: ``kimi_k2`` ->
            ``deepseek_v3``), found by trying each string of the class's source.
        text_field_defaults: for a wrapper, the defaults its class gives the text model where they
            differ from the text class's own (GOT-OCR2's Qwen2: hidden_size 1024, 16 heads), read
            over the text entry's ``field_defaults`` for a config without a ``text_config``.
        text_config_merges: for a wrapper whose class merges defaults of its own under a given
            ``text_config`` (Voxtral: ``{**init_kwargs, **text_config}``), those defaults, found by
            building the class from a bare ``text_config``; read under a config's text_config.
        top_level_read: for a wrapper, the keys of ``_params.TOP_LEVEL_KEYS`` its class may read into
            the text model from the top level of a config without ``text_config`` (Qwen2-VL's, for
            older configs, with its text class's other keys), found by building it with each; absent
            where it reads none (LlavaConfig(rope_theta=5.0) keeps 10000, and drops any other key):
            posenc refuses the keys the class drops where reading them would change the answer.
        layout: the pair layout of the modeling file's rotation, found by running its rotary module
            and ``apply_rotary_pos_emb`` (or the function its attention class calls) on probe q
            and k and comparing the scores with posenc's rotation in each layout; a `LayoutFlag`
            where the attention code branches on ``rope_interleave``; None where neither matched
            (posenc then asks for the layout).
        turns_backward: with ``layout`` None, the layout whose pairs the model's rotation turns the
            other way (by -m theta where posenc turns by +m theta), found by probing: NanoChat's
            ``rotate_half`` flips both signs (modeling_nanochat.py:169-173); posenc refuses it.
        mrope_sections: the M-RoPE sections the rotary module demands (`MropeSections`); posenc
            refuses a config whose sections transformers' module fails on.
        rotary_sites: where a layer rotates at two sites in two layouts, each attention class's
            layout (DeepSeek-V3.2: its indexer half, its attention interleaved).
        fixed_tables: GPT-J's and CodeGen's ``create_sinusoidal_positions``: base 10000 and no
            scaling, whatever the config says.
        rotated_width_key: a top-level key the class reads as the rotated width in features
            (GPT-J's ``rotary_dim``; read as ``rotary_dim / head_dim``).
        default_theta: the config class's ``default_theta`` (the base without ``rope_theta``), one
            number or one per layer type (``{"global": ..., "local": ...}``: local for sliding layers).
        default_rope_parameters: the ``rope_parameters`` the class builds from a config that gives
            none, without what top-level keys put there: one flat set, or one set (or None, NoPE)
            per layer type.
        absent_defaults: what the class adds to a flat ``rope_parameters`` set that lacks it (a
            base other than ``default_theta``, a ``partial_rotary_factor``); ``absent_defaults_scaling``
            the same for a ``rope_scaling`` where it differs.
        ignored_sources: a source (``rope_scaling``) the class ignores.
        ignored_top_level: canonical top-level keys (``rope_theta``, ``partial_rotary_factor``) the
            class ignores.
        key_aliases: top-level keys the class reads under another name (GPT-NeoX's
            ``rotary_emb_base`` -> ``rope_theta``, ``rotary_pct`` -> ``partial_rotary_factor``).
        base_keys: per layer type, the top-level key holding its base (Gemma 3's
            ``rope_local_base_freq`` for sliding layers).
        type_aliases: rope types the class renames (Phi-3's ``su`` -> ``longrope``, Qwen2-VL's
            ``mrope`` -> ``default``), found by building it with each name.
        flat_scaling_type_key_ignored: a per-layer-type class ignores a flat ``rope_scaling`` that
            spells its type ``type`` instead of ``rope_type``.
        flat_landing: per source, where a flat set lands in a per-layer-type class (`FlatLanding`).
        nested_bases: per layer type, the key giving its base when its set has no ``rope_theta``,
            and the base without that key (`KeyDefault`); ``nested_theta_required``: the class leaves
            such a set without a base (posenc refuses it).
        nested_fill: per layer type, settings the class adds to a set that lacks them;
            ``nested_forced``: those it sets whatever the set says.
        nested_partial_ignored: layer types whose rotary module rotates the whole head whatever a
            set's ``partial_rotary_factor`` says (Gemma 3's default rule reads only the base).
        nested_partial_scaled: per such layer type, what a scaled rule with a fraction in its set does
            there, as ``partial_scaled`` (``"fails"``: Gemma 3's attention rotates the whole head).
        nested_top_level: top-level keys the class copies into per-layer-type sets lacking them.
        null_filled: layer types whose None set the class fills in as a set without a base.
        field_defaults: the config class's defaults of the keys posenc reads when a config.json
            leaves them out (``head_dim``, ``max_position_embeddings``, ``sliding_window``,
            ``rope_interleave``, ``qk_rope_head_dim``, ...).
        attribute_map: canonical names the class stores under another key (DBRX's ``d_model`` for
            ``hidden_size``), from its ``attribute_map``.
        legacy_names: another name a config may give a key under, which the class maps onto it and
            keeps (HunYuan-VL's ``attention_head_dim`` for ``head_dim``), from its ``attribute_map``.
        head_dim_from: the key the class copies into ``head_dim``, or the keys it adds (`HeadDimFrom`).
        per_layer_head_dim: per layer type, a key the class writes into ``per_layer_config`` as its
            head width when the config gives none, with its default (`HeadDimDefault`: Gemma 4's
            ``global_head_dim``).
        ignore_keys: the keys the class tells the rope utils' validation to ignore
            (``ignore_keys_at_rope_validation``), which a set may therefore carry.
        ntk_alpha: the rotary module runs rope type "dynamic" with a truthy ``alpha`` as a fixed
            NTK base (HunYuan's ``compute_ntk_alpha_rope_parameters``, modeling_hunyuan_v1_dense.py:296-356).
        partial_ignored: the rotary module's own default rule rotates the whole head whatever
            ``partial_rotary_factor`` says (Llama's, modeling_llama.py:100-105; the scaled rules of the
            rope utils read it): posenc refuses a fraction != 1 with rope type "default".
        partial_scaled: on such a type, what a scaled rule (linear, dynamic, yarn, longrope, llama3),
            which builds frequencies for ``head_dim * partial_rotary_factor`` features, does there:
            ``"fails"``, the attention rotates q and k of a fixed width (the whole head; Mistral 4's,
            the width of its class's own fraction, ``absent_defaults``) and fails on the cos and sin
            of another (Llama's apply_rotary_pos_emb, modeling_llama.py:147-148), so posenc refuses
            any other fraction; ``"reads"``, it rotates that width. Probed on each rule with the
            class's own fraction and half of it (``tools/rope_model_types/partial.py``); absent
            where no probe answers.
        scaled_rules_refused: the rotary module accepts only rope type "default" and raises for any
            other (RecurrentGemma's, modeling_recurrent_gemma.py:71-74; Ernie 4.5 VL's text module;
            the vision towers' axial modules): posenc refuses a scaling rule there.
        rope_switch: a config key whose value switches the rotation on (`RopeSwitch`: ESM's
            ``position_embedding_type``); posenc reads other values as no RoPE.
        theta_only: the rotary module reads only the top-level ``rope_theta`` (the default rule),
            ignoring a config's ``rope_parameters`` and ``rope_scaling`` (ESM), found by building it.
        rotates_values: a flag under which the rotation turns the values too (`ValueFlag`:
            RoFormer's ``rotary_value``); posenc refuses it on.
        head_slice: the rotation is assigned to a slice of q and k (`HeadSlice`: Qwen2.5-Omni's DiT
            rotates its first head only); posenc refuses it.
        defaults_depend_on: groups of keys posenc does not read that change the defaults above
            (Mistral 4's rotated fraction from ``qk_rope_head_dim`` and ``qk_nope_head_dim``):
            posenc refuses a config that changes a whole group.
        layer_types_computed: the class computes ``layer_types`` from other keys (a property):
            posenc does not read it.
        layer_pattern: how the class fills ``layer_types`` (`LayerPattern`); ``layer_pattern_unknown``:
            it fills them by a rule no probe fitted (posenc asks for ``layer_types`` where it matters).
        nope_pattern: how the class fills ``no_rope_layers`` (`NopePattern`).
        given_layer_types, given_no_rope_layers: what the class does with such a list a config
            gives (`GivenList`).
        layer_types_from: layer kinds named from a flags list (`LayerTypesFrom`).
        rope_condition: the ``if`` around the rotation call in the modeling file's attention, named:
            ``no_rope_layers`` (``self.use_rope``), ``sliding_only`` (only sliding layers rotate),
            ``sliding_or_no_window``, ``no_alibi`` (``alibi is None``: Falcon), ``use_mem_rope``
            (``self.config.use_mem_rope``: Zamba2's shared attention rotates only with that flag on).
        softmax_scale: ``yarn_mscale_all_dim`` where the attention calls ``yarn_apply_mscale`` on
            its softmax scale (DeepSeek).
        query_temperature: the query factor the attention applies after the rotation:
            ``llama_4_scaling_beta`` (``get_llama_4_attn_scale``: Ministral 3) or ``llama4_nope_tuning``
            (``attn_temperature_tuning``: Llama 4's NoPE layers).
        attention_sinks: the attention adds a learned sink logit per head (``self.sinks``: gpt-oss).
        window_all_layers: the model's forward builds one sliding-window mask for every layer
            whenever ``sliding_window`` is set (Mistral, Mixtral, StarCoder2, Phi-3).
        window_switch: a key without which the class drops the window (`WindowSwitch`).
        window_layers: which layers the class makes sliding once the window is on (`WindowLayers`).
        notes: anything else the generator found and posenc does not follow (a rotation condition
            outside the vocabulary above, layer types posenc does not classify), shown to the reader.
        read_by: the function that reads this model type's configs instead of the table (the
            generator's one override, ``READ_ELSEWHERE``: DeepSeek-V4, whose rope parameters are keyed
            by rope kind); the entry's other keys are what the generic probes found.
    """

    rope: Literal[False]
    rotation_calls: list[str]
    rotating_parts: dict[str, str]
    rotates_elsewhere: list[str]
    rotation_off: dict[str, str]
    rope_parameters_given_only: bool
    text_model_type: str
    text_model_type_aliases: dict[str, str]
    text_field_defaults: dict[str, int]
    text_config_merges: dict[str, ParamValue | dict[str, ParamValue]]
    top_level_read: list[str]
    layout: Layout | LayoutFlag | None
    turns_backward: Layout
    mrope_sections: MropeSections
    rotary_sites: dict[str, Layout]
    fixed_tables: bool
    rotated_width_key: str
    default_theta: float | dict[str, float]
    default_rope_parameters: dict[str, ParamValue | dict[str, ParamValue] | None]
    absent_defaults: dict[str, float]
    absent_defaults_scaling: dict[str, float]
    ignored_sources: list[str]
    ignored_top_level: list[str]
    key_aliases: dict[str, str]
    base_keys: dict[str, str]
    type_aliases: dict[str, str]
    flat_scaling_type_key_ignored: bool
    flat_landing: dict[str, FlatLanding]
    nested_bases: dict[str, KeyDefault]
    nested_theta_required: bool
    nested_fill: dict[str, dict[str, float]]
    nested_forced: dict[str, list[str]]
    nested_partial_ignored: list[str]
    nested_partial_scaled: dict[str, Literal["fails", "reads"]]
    nested_top_level: list[str]
    null_filled: list[str]
    field_defaults: dict[str, int | float | bool]
    attribute_map: dict[str, str]
    legacy_names: dict[str, str]
    head_dim_from: HeadDimFrom
    per_layer_head_dim: dict[str, HeadDimDefault]
    ignore_keys: list[str]
    ntk_alpha: bool
    partial_ignored: bool
    partial_scaled: Literal["fails", "reads"]
    scaled_rules_refused: bool
    rope_switch: RopeSwitch
    theta_only: bool
    rotates_values: ValueFlag
    head_slice: HeadSlice
    defaults_depend_on: list[dict[str, Scalar]]
    layer_types_computed: bool
    layer_pattern: LayerPattern
    layer_pattern_unknown: bool
    nope_pattern: NopePattern
    given_layer_types: GivenList
    given_no_rope_layers: GivenList
    layer_types_from: LayerTypesFrom
    rope_condition: list[Literal["no_rope_layers", "sliding_only", "sliding_or_no_window", "no_alibi", "use_mem_rope"]]
    softmax_scale: Literal["yarn_mscale_all_dim"]
    query_temperature: Literal["llama_4_scaling_beta", "llama4_nope_tuning"]
    attention_sinks: bool
    window_all_layers: bool
    window_switch: WindowSwitch
    window_layers: WindowLayers
    notes: list[str]
    read_by: str


class ModelTypeTable(TypedDict):
    """The whole of ``model_types.json``.

    Attributes:
        _source: which generator wrote it, from which transformers version.
        model_types: every model type transformers registers that has an entry, by name.
    """

    _source: str
    model_types: dict[str, ModelTypeEntry]
