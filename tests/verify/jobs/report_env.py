"""Prints whether the user's sitecustomize ran, then uses the device a little."""
import os

import torch

print("user sitecustomize:", os.environ.get("USER_SITECUSTOMIZE_RAN", "no"))
torch.cuda.allocate(1 << 30)
