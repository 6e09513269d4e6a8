#!/usr/bin/env python3
"""build_wheel.py BINARY OUT_DIR [--version V] [--glibc 2.Y]: a wheel with the tptriage binary inside.

The ruff/uv model: the binary is installed to the environment's scripts folder
(`tptriage` on PATH after `pip install`), and a launcher package makes
`python -m tptriage` run it; there is no other Python code. The platform tag
is computed from the binary: manylinux_2_X_ARCH, X the newest glibc symbol
version it needs (a binary that still needs other shared libraries is
refused: build it with -DTPT_STATIC=ON). `--glibc 2.Y` sets the tag to the
glibc the binary was built for (packaging/oldglibc: 2.28) when that is newer
than its newest symbol; older than the symbols is refused. `auditwheel show`
confirms the tag.
Standard library only.
"""
import argparse
import base64
import hashlib
import os
import re
import stat
import subprocess
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ALLOWED_LIBS = {  # what the manylinux policies allow a binary to need
    "libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1", "libutil.so.1",
    "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1", "libgcc_s.so.1",
}


def elf_facts(binary):
    """(arch, newest GLIBC_2.x minor, needed libraries) from readelf."""
    header = subprocess.run(["readelf", "-h", binary], capture_output=True, text=True, check=True).stdout
    machine = re.search(r"Machine:\s+(.*)", header).group(1)
    arch = "x86_64" if "X86-64" in machine else "aarch64" if "AArch64" in machine else None
    if arch is None:
        sys.exit(f"build_wheel.py: {binary}: unsupported machine {machine!r}")
    dyn = subprocess.run(["readelf", "-d", "-V", binary], capture_output=True, text=True, check=True).stdout
    needed = re.findall(r"\(NEEDED\).*\[(.*)\]", dyn)
    minors = [int(m) for m in re.findall(r"GLIBC_2\.(\d+)", dyn)]
    return arch, max(minors) if minors else 17, needed


def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binary")
    ap.add_argument("out_dir")
    ap.add_argument("--version", help="default: from `BINARY --version`")
    ap.add_argument("--glibc", help="the tag's glibc, 2.Y (default: the binary's newest GLIBC symbol)")
    args = ap.parse_args()

    arch, glibc_minor, needed = elf_facts(args.binary)
    extra = sorted(set(needed) - ALLOWED_LIBS)
    if extra:
        sys.exit(f"build_wheel.py: {args.binary} needs {', '.join(extra)}: build with -DTPT_STATIC=ON")
    version = args.version
    if not version:
        # A cross-built binary cannot run here: then --version must be given.
        out = subprocess.run([args.binary, "--version"], capture_output=True, text=True, check=True).stdout
        version = out.split()[1]
    tag_minor = max(glibc_minor, 17)
    if args.glibc:
        m = re.fullmatch(r"2\.(\d+)", args.glibc)
        if not m:
            sys.exit(f"build_wheel.py: --glibc {args.glibc!r}: expected 2.Y, e.g. 2.28")
        if int(m.group(1)) < tag_minor:
            sys.exit(f"build_wheel.py: --glibc {args.glibc}: {args.binary} needs GLIBC_2.{glibc_minor}")
        tag_minor = int(m.group(1))
    tag = f"py3-none-manylinux_2_{tag_minor}_{arch}"
    name = f"tptriage-{version}-{tag}.whl"
    dist_info = f"tptriage-{version}.dist-info"
    data_scripts = f"tptriage-{version}.data/scripts/tptriage"

    with open(args.binary, "rb") as f:
        binary = f.read()
    with open(os.path.join(HERE, "__main__.py"), "rb") as f:
        launcher = f.read()
    license_text = b""
    license_path = os.path.join(HERE, "..", "..", "LICENSE")
    if os.path.exists(license_path):
        with open(license_path, "rb") as f:
            license_text = f.read()
    readme = b""
    readme_path = os.path.join(HERE, "..", "..", "README.md")
    if os.path.exists(readme_path):
        with open(readme_path, "rb") as f:
            readme = f.read()
    metadata = (
        "Metadata-Version: 2.1\n"
        "Name: tptriage\n"
        f"Version: {version}\n"
        "Summary: Why a multi-GPU LLM server died, with the numbers (SGLang, vLLM, NCCL log triage)\n"
        "License: Apache-2.0\n"
        "Classifier: License :: OSI Approved :: Apache Software License\n"
        "License-File: LICENSE\n"
        "Requires-Python: >=3.8\n"
        "Description-Content-Type: text/markdown\n\n"
    ).encode() + readme
    wheel = (
        "Wheel-Version: 1.0\n"
        "Generator: tptriage packaging/wheel/build_wheel.py\n"
        "Root-Is-Purelib: false\n"
        f"Tag: {tag}\n"
    ).encode()
    files = [
        ("tptriage/__init__.py", b'"""tptriage: the binary is installed as a script; see __main__."""\n', 0o644),
        ("tptriage/__main__.py", launcher, 0o644),
        (data_scripts, binary, 0o755),
        (f"{dist_info}/METADATA", metadata, 0o644),
        (f"{dist_info}/WHEEL", wheel, 0o644),
    ]
    if license_text:
        files.append((f"{dist_info}/LICENSE", license_text, 0o644))
    record = "".join(f"{p},{record_hash(d)},{len(d)}\n" for p, d, _ in files) + f"{dist_info}/RECORD,,\n"
    files.append((f"{dist_info}/RECORD", record.encode(), 0o644))

    os.makedirs(args.out_dir, exist_ok=True)
    path = os.path.join(args.out_dir, name)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for p, data, mode in files:
            info = zipfile.ZipInfo(p, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = (stat.S_IFREG | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    print(path)


if __name__ == "__main__":
    main()
