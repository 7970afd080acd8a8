"""Run every benchmark (`python -m benchmarks`) or the named ones (`python -m benchmarks read`)."""

import importlib
import pkgutil
import sys
from pathlib import Path

names = sys.argv[1:] or sorted(
    m.name.removeprefix("bench_")
    for m in pkgutil.iter_modules([str(Path(__file__).parent)])
    if m.name.startswith("bench_")
)
for name in names:
    print(f"\n##### benchmark: {name}")
    importlib.import_module(f"benchmarks.bench_{name}").main()
