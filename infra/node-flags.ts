// Node flags of the controller and webhook containers, on the command line: V8 accepts
// `--min-semi-space-size` only there (NODE_OPTIONS refuses it).
//
// Why a fixed young generation (issue 33, docs/decisions.md "A young generation of fixed size"): V8
// starts a process with 1 MiB semi-spaces and grows them only after enough bytes have survived, so
// at the pace of one admission at a time a process may keep its small young generation for its
// whole life or grow it, depending on what it happened to do first. Small, it collects every 25-30
// reviews (35 scavenges per 1,000 against 6.6) and pays 45-55 µs per review in those collections
// against 10-12; the same code, started the same way, landed in either state from one run to the
// next. 16 MiB is V8's own ceiling for these heaps, so the flag changes where the young
// generation starts, not how large it may grow.
export const PROCESS_NODE_FLAGS: readonly string[] = ['--min-semi-space-size=16'];
