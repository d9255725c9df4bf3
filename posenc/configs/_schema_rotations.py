"""The model-type table's entries for rotations outside transformers' usual pattern, typed (the
generator's ``tools/rope_model_types/legacy.py``; `posenc.configs._schema.ModelTypeEntry` names
them): a config key that switches the rotation on, a flag that rotates the values too, and a
rotation of a slice of the heads. Source locators are transformers 5.23.0's, as pinned.
"""

from __future__ import annotations

from typing import TypedDict

__all__ = ["HeadSlice", "RopeSwitch", "ValueFlag"]


class RopeSwitch(TypedDict):
    """A config key whose value decides whether the attention rotates (ESM's
    ``if self.position_embedding_type == "rotary":``, modeling_esm.py:368), read from the source.

    Attributes:
        key: the config key (``"position_embedding_type"``).
        rotary: the value under which q and k rotate (``"rotary"``).
        absolute: the value under which learned absolute position embeddings are added to the
            token embeddings instead (``"absolute"``, modeling_esm.py:209-212, 253-255), None if none.
        default: the config class's default for the key.
    """

    key: str
    rotary: str
    absolute: str | None
    default: str


class ValueFlag(TypedDict):
    """A boolean config key under which the rotation turns the values as well as q and k
    (RoFormer's ``rotary_value``, modeling_roformer.py:180-187, 237-242): found in the source (the
    rotation called with one more argument under ``if self.<key>:``) and by running the rotation.

    Attributes:
        key: the flag.
        default: the config class's default for it.
    """

    key: str
    default: bool


class HeadSlice(TypedDict):
    """A rotation whose result is assigned to a slice of q and k (Qwen2.5-Omni's DiT:
    ``query[:, :1], key[:, :1] = apply_rotary_pos_emb(deinterleave_head_dim(query[:, :1]), ...)``,
    modeling_qwen2_5_omni.py:2985-2991), read from the source of the attention class built from the
    model type's config.

    Attributes:
        attention: the attention class.
        sliced: the assignment's targets as written.
        through: the functions the sliced q and k pass through before the rotation.
    """

    attention: str
    sliced: str
    through: list[str]
