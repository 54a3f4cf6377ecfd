# A gdb command, `plt [KEY]`, that prints parking_lot_core's global table
# in a stopped process: each bucket whose word lock is held or whose queue
# is not empty, with each queued thread's data (its address, the key it
# waits on, and the 32-bit word at that key: a channel lock's state), then
# the bucket KEY hashes to. Load it with `source tests/c/parking_lot_table.py`
# (tests/c/fork_stress.c's DEFERGC_FORK_STRESS_GDB runs such a file at a
# hung child). It reads parking_lot_core 0.9's private layout.
import gdb
def dump_table(key=None):
    ht = gdb.parse_and_eval("'parking_lot_core::parking_lot::HASHTABLE'")
    tp = ht['p']['value']
    t = tp.dereference()
    entries = t['entries']
    bits = int(t['hash_bits'])
    n = int(entries['length'])
    data = entries['data_ptr']
    print("table %s: %d buckets, %d bits" % (tp, n, bits))
    busy = 0
    for i in range(n):
        b = data[i]
        lock = int(b['mutex']['state']['v']['value'])
        head = b['queue_head']['value']['value']
        entries_l = []
        cur = head
        k = 0
        while int(cur) != 0 and k < 64:
            td = cur.dereference()
            kk = int(td['key']['v']['value'])
            st = ''
            if kk > 0x10000:
                try:
                    st = ' word=%#x' % (int(gdb.parse_and_eval("*(unsigned int*)%d" % kk)) & 0xffffffff)
                except Exception as e:
                    st = ' word=?'
            entries_l.append("%s key=%#x%s" % (cur, kk, st))
            cur = td['next_in_queue']['value']['value']
            k += 1
        if lock != 0 or entries_l:
            busy += 1
            print(" bucket %d: wordlock=%#x queue=[%s]" % (i, lock, ", ".join(entries_l)))
    if key is not None:
        h = ((key * 0x9E3779B97F4A7C15) & 0xffffffffffffffff) >> (64 - bits)
        print("key %#x hashes to bucket %d" % (key, h))
    nt = gdb.parse_and_eval("'parking_lot_core::parking_lot::NUM_THREADS'")
    print("NUM_THREADS", nt['v']['value'])
class PLT(gdb.Command):
    def __init__(self): super().__init__("plt", gdb.COMMAND_USER)
    def invoke(self, arg, tty):
        dump_table(int(arg, 0) if arg else None)
PLT()
