"""A launcher in the manner of torchrun: starts one process per rank with
RANK, LOCAL_RANK and WORLD_SIZE set, prefixes their lines with [rankN]:, and
fails when any rank fails."""
import os
import subprocess
import sys
import threading

nproc = int(sys.argv[1])
command = sys.argv[2:]
children = []
for rank in range(nproc):
    env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(nproc))
    children.append(subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))


def relay(rank, child):
    for line in child.stdout:
        sys.stdout.write("[rank%d]:%s" % (rank, line))
        sys.stdout.flush()


threads = [threading.Thread(target=relay, args=(r, c)) for r, c in enumerate(children)]
for t in threads:
    t.start()
codes = [c.wait() for c in children]
for t in threads:
    t.join()
sys.exit(max(codes))
