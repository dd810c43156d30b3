# The workload of bench/python-heap.sh: CPython holding ~60-70 MB in many
# small objects until its end (python3.11-dbg: ~63 MB over the
# interpreter's own ~9 MB), built three common ways; prints its peak RSS
# and ends with all of it still held: one extra reference to each of the
# three keeps them through the interpreter's teardown, so a heap profiler's
# "live at the end" (rsprof's Heap column, heaptrack's leaks) is what the
# program held. (os._exit would do that too, but heaptrack loses the last
# events it buffered when the process ends without exit().)
#   python3.11-dbg bench/python-heap.py [SCALE]
import ctypes
import sys


def make_strings(n):
    # n small str objects kept in a list (~40 MB at n = 400,000)
    return ["key:%d" % i for i in range(n)]


def make_dict(keys, n):
    # a dict of n entries with new int values (~19 MB at n = 200,000): the
    # hash table grows by resizing, the ints are small objects
    return {keys[i]: i * 3 for i in range(n)}


def grow_list(items):
    # a list grown one append at a time: its item array is reallocated
    out = []
    for x in items:
        out.append(x)
    return out


def peak_rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return -1


scale = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
strings = make_strings(int(400000 * scale))
table = make_dict(strings, int(200000 * scale))
grown = grow_list(strings)
print("python-heap: %d strings, %d dict entries, %d list items; peak RSS %d KiB"
      % (len(strings), len(table), len(grown), peak_rss_kib()))
for kept in (strings, table, grown):
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(kept))
