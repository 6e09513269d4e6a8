"""`python -m tptriage`: run the tptriage binary this wheel installed."""
import os
import sys
import sysconfig


def find_binary():
    """The tptriage the wheel put in its environment's scripts folder."""
    candidates = [sysconfig.get_path("scripts")]
    user = sysconfig.get_path("scripts", scheme=f"{os.name}_user") if os.name == "posix" else None
    if user:
        candidates.append(user)
    candidates.append(os.path.join(os.path.dirname(sys.executable)))
    for folder in candidates:
        path = os.path.join(folder, "tptriage")
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise FileNotFoundError("tptriage binary not found in " + ", ".join(candidates))


if __name__ == "__main__":
    binary = find_binary()
    os.execv(binary, [binary, *sys.argv[1:]])
