"""The script anyone would write first: json.loads per line and a Counter. The audit's baseline."""

import json
import sys
from collections import Counter

counts: Counter[object] = Counter()
with open(sys.argv[1], encoding="utf-8") as file:
    for line in file:
        counts[json.loads(line).get("failure_kind")] += 1
for kind, count in counts.most_common():
    print(f"{count:>9} {kind}")
