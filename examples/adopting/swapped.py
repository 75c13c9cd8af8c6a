# A line of the producer's code right after the swap: an older constant keeps its value and warns.
import failure_kinds as fk

print(fk.PEER_DROP)
