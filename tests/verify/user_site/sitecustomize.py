"""A user's own sitecustomize: the probe must load it as before."""
import os

os.environ["USER_SITECUSTOMIZE_RAN"] = "yes"
