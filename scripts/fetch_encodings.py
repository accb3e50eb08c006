"""Re-create memwarden/tokens/encodings/*.tiktoken from their pinned source and verify them.

memwarden ships OpenAI's BPE rank files so it never downloads anything at run time. This
script documents (and repeats) where they come from: the MIT-licensed PyPI wheel
litellm==1.109.1, which carries byte-identical copies under tiktoken's cache names. It
needs PyPI access; the product itself never does.

    python scripts/fetch_encodings.py [--check]
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

PIN = "litellm==1.109.1"
FILES = {
    "cl100k_base": ("9b5ad71b2ce5302211f9c61530b329a4922fc6a4",
                    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
    "o200k_base": ("fb374d419588a4632f3f557e76b4b70aebbca790",
                   "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
}
DEST = Path(__file__).resolve().parent.parent / "memwarden" / "tokens" / "encodings"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="only verify the shipped files")
    args = ap.parse_args(argv)
    bad = 0
    if not args.check:
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d",
                            tmp, PIN], check=True)
            wheel = zipfile.ZipFile(glob.glob(f"{tmp}/litellm-*.whl")[0])
            for name, (cache_name, _) in FILES.items():
                data = wheel.read(f"litellm/litellm_core_utils/tokenizers/{cache_name}")
                (DEST / f"{name}.tiktoken").write_bytes(data)
    for name, (_, digest) in FILES.items():
        actual = hashlib.sha256((DEST / f"{name}.tiktoken").read_bytes()).hexdigest()
        ok = actual == digest
        bad += not ok
        print(f"{name}: {'ok' if ok else 'MISMATCH'} {actual}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
