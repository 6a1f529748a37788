// Node flags of the controller and webhook containers, on the command line: V8 accepts
// `--min-semi-space-size` only there (NODE_OPTIONS refuses it). Every flag here is one that both
// the image's Node release and the development one accept (infra/packaging.test.ts runs under each):
// Node exits at start on a V8 flag its release does not know.
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

/** The controller's: it keeps V8's memory reducer, which returns the first sync's garbage at scale. */
export const CONTROLLER_NODE_FLAGS: readonly string[] = PROCESS_NODE_FLAGS;

/**
 * The webhook's. Without V8's memory reducer (issue 33, docs/decisions.md "The webhook without V8's
 * memory reducer"): the webhook holds code and the reviews in flight, nothing that grows with the
 * cluster, so what it frees after a burst of reviews is what the next burst allocates again. The
 * reducer gave it back with one or two full collections some 100 s after each burst (about 40 ms
 * of CPU, on a timer that wakes the process every 8 s meanwhile), at the price of 15-20 MiB.
 */
export const WEBHOOK_NODE_FLAGS: readonly string[] = [...PROCESS_NODE_FLAGS, '--no-memory-reducer'];
