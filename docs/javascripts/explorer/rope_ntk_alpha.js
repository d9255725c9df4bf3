// HunYuan's fixed NTK alpha, as posenc/configs/_ntk_alpha.py reads it: rope type "dynamic" with an
// alpha is a fixed base, read as posenc's "ntk" rule. Loaded before rope_layer.js, which uses it.
(function (global) {
  "use strict";
  const P = global.posencPython;
  const S = global.posencRopeScaling;
  const { valueError, repr, get, has } = P;
  const { field } = global.posencRopeTable;

  const ALPHA_UNREAD = ["factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim"];
  const ALPHA = "rope_parameters['alpha']";
  const ALPHA_NOTE = "rope type 'dynamic' with 'alpha' (HunYuan): transformers' rotary module for this model type " +
    "runs it as a fixed NTK base, rope_theta * alpha ** (d / (d - 2)) with d = head_dim, that does not grow with " +
    "the sequence; read as posenc's 'ntk' scaling with factor alpha ('factor', 'beta_fast', 'beta_slow', " +
    "'mscale' and 'mscale_all_dim' are not read)";

  /** _reads_alpha: whether params carry an alpha the model type's rotary module reads (HunYuan). */
  function readsAlpha(found, params) {
    return P.truthy(get(found, "ntk_alpha")) && get(params, "alpha") !== null;
  }

  /** _alpha_scaling: HunYuan's alpha as posenc's "ntk" rule, checked as transformers runs it. */
  function alphaScaling(config, found, params) {
    const alpha = params.alpha;
    const value = P.checkFloat(ALPHA, alpha, { minimum: 1.0, maximum: S.LARGEST });
    if (!has(params, "factor")) {
      throw valueError(`rope parameters of type 'dynamic' need 'factor' beside ${ALPHA} = ${repr(alpha)}: ` +
        "transformers' config class requires the key (its value is unused with alpha)");
    }
    if (field(found, config, "head_dim") === null) {
      throw valueError(`config needs 'head_dim' with ${ALPHA}: transformers' code for this model type computes the ` +
        "base from config.head_dim and fails without it");
    }
    const fraction = get(params, "partial_rotary_factor");
    if (fraction !== null && !P.equal(fraction, 1.0)) {
      throw valueError(`partial_rotary_factor is ${repr(fraction)}, but with ${ALPHA} transformers' code for this ` +
        "model type rotates the whole head (config.head_dim): leave it out");
    }
    const scaling = { type: "ntk", factor: value };
    S.parseScaling(scaling);
    return scaling;
  }

  global.posencRopeNtkAlpha = Object.freeze({ ALPHA_UNREAD, ALPHA, ALPHA_NOTE, readsAlpha, alphaScaling });
})(typeof window !== "undefined" ? window : globalThis);
