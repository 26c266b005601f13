"""A job that never imports torch."""
print("nothing to do with GPUs")
