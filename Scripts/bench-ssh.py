#!/usr/bin/env python3
"""The ssh door's latency on loopback (issue 32), beside forum without ssh in the same run.

Needs root (a throwaway sshd and the door's user, as SSHDoorTests make them) and a built forum:
  sudo python3 Scripts/bench-ssh.py [.build/release/forum] [rounds]
Prints the p50 and p90 of:
  - connect: from starting `ssh -t board@127.0.0.1` to the `forum>` prompt (floor: forum's own
    prompt started locally on the same board);
  - live: from Enter on `comment 1 TEXT` at one member's prompt to TEXT on another member's screen,
    both over ssh (floor: the same two prompts run locally).
"""
import os, pwd, shutil, socket, subprocess, sys, time, uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_support

forum = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".build/release/forum")
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 20
user = "forumsshtest"
root = "/var/lib/forum-ssh-tests"
if os.geteuid() != 0:
    sys.exit("bench-ssh: run as root (it starts sshd and uses the door's Unix user)")

os.makedirs(root, mode=0o755, exist_ok=True)
d = os.path.join(root, "bench-" + uuid.uuid4().hex[:8])
os.makedirs(d + "/board"); os.makedirs(d + "/state"); os.makedirs(d + "/local"); os.chmod(d, 0o755)
os.makedirs("/run/sshd", exist_ok=True)
try:
    pwd.getpwnam(user)
    subprocess.run(["usermod", "--shell", forum, "--home", root, user], check=True)
except KeyError:
    subprocess.run(["useradd", "--system", "--no-create-home", "--home-dir", root, "--shell",
                    forum, "--password", "*", user], check=True)
board = d + "/board/board.sqlite"
subprocess.run([forum, "ssh-setup", "--apply", "--db", board, "--user", user, "--state",
                d + "/state", "--forum", forum, "--posts-per-minute", "0", "--keys-command",
                d + "/keys", "--config-file", d + "/door.conf"], check=True,
               stdout=subprocess.DEVNULL)
subprocess.run(["chown", "-R", user + ":", d + "/state", d + "/local"], check=True)
for name in ["hostkey", "alice", "bob"]:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", d + "/" + name], check=True)
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
open(d + "/sshd_config", "w").write(f"""Port {port}
ListenAddress 127.0.0.1
HostKey {d}/hostkey
PidFile {d}/sshd.pid
UsePAM no
AuthorizedKeysFile none
PasswordAuthentication no
Include {d}/door.conf
""")
sshd = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", d + "/sshd_config"],
                        stderr=open(d + "/sshd.log", "w"))
for _ in range(200):
    try:
        socket.create_connection(("127.0.0.1", port)).close(); break
    except OSError:
        time.sleep(0.02)

def ssh_words(key, tty=True):
    return ["ssh", "-tt" if tty else "-T", "-F", "/dev/null", "-i", f"{d}/{key}", "-p", str(port),
            "-o", "IdentitiesOnly=yes", "-o", "SendEnv=LANG", "-o", f"UserKnownHostsFile={d}/known", "-o",
            "StrictHostKeyChecking=no", "-o", "BatchMode=yes", "-o", "LogLevel=ERROR",
            f"{user}@127.0.0.1"]

local_env = {"PATH": "/usr/bin:/bin", "TERM": "xterm", "LANG": "C.UTF-8", "HOME": d + "/local",
             "XDG_CONFIG_HOME": d + "/local/config", "XDG_STATE_HOME": d + "/local/state",
             "XDG_DATA_HOME": d + "/local/data"}

Pane = bench_support.Pane

def pct(values, p):
    return bench_support.percentile(values, p) * 1000

# Members with names, and a thread to comment on.
for key in ["alice", "bob"]:
    subprocess.run(ssh_words(key, tty=False) + ["name", key], check=True, stdout=subprocess.DEVNULL)
subprocess.run(ssh_words("alice", tty=False) + ["new", "--title", "bench", "--description", "x"],
               check=True, stdout=subprocess.DEVNULL)
local = [forum, "--db", board]
subprocess.run(["chown", "-R", user + ":", d + "/board"])

def connect_times(words, env):
    times = []
    for _ in range(rounds):
        start = time.monotonic()
        pane = Pane(words, env)
        times.append(pane.wait_for(b"forum> ") - start)
        pane.close()
    return times

def live_times(writer_words, reader_words, env):
    writer, reader = Pane(writer_words, env), Pane(reader_words, env)
    writer.wait_for(b"forum> "); reader.wait_for(b"forum> ")
    # Inside the thread, each new comment is drawn as it arrives.
    reader.send("show 1\r"); reader.wait_for(b"forum #1> ")
    times = []
    for i in range(rounds):
        text = f"live-{uuid.uuid4().hex[:10]}"
        start = time.monotonic()
        writer.send(f"comment 1 {text}\r")
        times.append(reader.wait_for(text.encode()) - start)
        writer.wait_for(f"Posted 1/".encode())
        time.sleep(0.05)
    writer.close(); reader.close()
    return times

try:
    # The floor runs as the door's user would, on the same board, without ssh.
    sudo = ["/usr/sbin/runuser", "-u", user, "--"]
    floor_connect = connect_times(sudo + local + ["--profile", "floor"], local_env)
    ssh_connect = connect_times(ssh_words("bob"), {"PATH": "/usr/bin:/bin", "TERM": "xterm", "LANG": "C.UTF-8"})
    floor_live = live_times(sudo + local + ["--profile", "w"], sudo + local + ["--profile", "r"],
                            local_env)
    ssh_live = live_times(ssh_words("alice"), ssh_words("bob"),
                          {"PATH": "/usr/bin:/bin", "TERM": "xterm", "LANG": "C.UTF-8"})
    print(f"rounds: {rounds}")
    print("| measurement | p50 | p90 | floor p50 (forum without ssh) | ratio |")
    print("|---|---|---|---|---|")
    print(f"| `ssh -t board@host` to the prompt | {pct(ssh_connect, .5):.1f} ms | "
          f"{pct(ssh_connect, .9):.1f} ms | {pct(floor_connect, .5):.1f} ms | "
          f"{pct(ssh_connect, .5) / pct(floor_connect, .5):.2f}x |")
    print(f"| a comment to another member's screen | {pct(ssh_live, .5):.1f} ms | "
          f"{pct(ssh_live, .9):.1f} ms | {pct(floor_live, .5):.1f} ms | "
          f"{pct(ssh_live, .5) / pct(floor_live, .5):.2f}x |")
finally:
    sshd.terminate(); sshd.wait()
    shutil.rmtree(d, ignore_errors=True)
