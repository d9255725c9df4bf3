# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lab: positioning in 3D
#
# PLACEHOLDER: this notebook is being written.

# %%
print("placeholder")
