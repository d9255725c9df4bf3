"""Experiments that measure what the source tutorials only asserted.

``python -m posenc.experiments length-extrapolation --config full --output FILE`` trains one tiny
language model per position method and writes their perplexity at 1, 2, 4 and 8 times the
training length (`posenc.experiments.length_extrapolation`).
"""
