"""A long job that leaves a helper process running: for --max-seconds,
Ctrl-C and the check that nothing outlives a run. Writes the helper's pid to
the file named first."""
import subprocess
import sys
import time

import torch

torch.cuda.allocate(1 << 30)
helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
with open(sys.argv[1], "w") as f:
    f.write(str(helper.pid))
print("started", flush=True)
while True:
    time.sleep(0.1)
