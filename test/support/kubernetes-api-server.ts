import { KubeConfig } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { ApiStatusError } from './kubernetes-api/api-status';
import { builtInResourceTypes } from './kubernetes-api/builtin-resources';
import {
  FaultInjector,
  type DelayRule,
  type FailureRule,
  type HangRule,
  type RecordedRequest,
} from './kubernetes-api/fault-injection';
import { testServerKubeConfigYaml } from './kubernetes-api/kubeconfig';
import { toApiObject, type ApiObject, type ObjectInput } from './kubernetes-api/api-object';
import { objectField, stringField, toJsonObject, type JsonObject } from './kubernetes-api/json';
import { ObjectStore } from './kubernetes-api/object-store';
import { sendStatusError } from './kubernetes-api/http-bodies';
import { RequestRouter } from './kubernetes-api/request-router';
import { ResourceRegistry, splitApiVersion, type ResourceType } from './kubernetes-api/resource-registry';
import { ObjectFilter } from './kubernetes-api/selectors';
import { WatchHub, type WatchMatcher } from './kubernetes-api/watch-stream';

// A protocol-faithful stand-in for kube-apiserver, for tests that drive the real @kubernetes/client-node
// against it: discovery, CRUD with resourceVersions, watches with history, bookmarks and 410s, CRDs,
// TokenReview, SubjectAccessReview over test RBAC grants, and failures on demand. Each part is a file
// in ./kubernetes-api/; this class wires them to an HTTP listener on 127.0.0.1.
//
//   const server = new KubernetesApiTestServer(); await server.start();
//   const kubeConfig = server.kubeConfig(); // or write server.kubeConfigYaml() to a file
//   server.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'default' } });
//   server.failNext({ watch: true, status: 410 }); server.dropWatches(); await server.restart();
//   server.access.grant({ subject: { kind: 'User', name: 'dev' }, namespace: 'a', rules }); await server.stop();
//
// Deliberate simplifications (a test that depends on one of these is testing the stand-in): strategic
// merge patch is applied as a JSON merge patch (lists are replaced, not merged by key); no server-side
// apply (415), no dryRun (400), no admission, no schema validation, no managedFields; deleting a
// Namespace or a CRD takes effect at once (no Terminating phase, no finalizers), pods are deleted
// without grace; a `continue` token resumes from the current state rather than a snapshot; custom
// resources have no conversion beyond rewriting apiVersion; RBAC rules are granted in code.

export type { DelayRule, FailureRule, HangRule } from './kubernetes-api/fault-injection';
export type { RecordedRequest, RequestMatcher } from './kubernetes-api/fault-injection';
import { TokenAuthority } from './kubernetes-api/token-reviews';
import { AccessAuthority } from './kubernetes-api/access-reviews';
export type { WatchMatcher } from './kubernetes-api/watch-stream';
export type { ApiObject, ObjectInput } from './kubernetes-api/api-object';

export interface KubernetesApiTestServerOptions {
  /** Serve ValidatingAdmissionPolicy(Binding) (1.30+); false mimics an older server. Default true. */
  validatingAdmissionPolicies?: boolean;
  /** Change events kept for watch replay; older resourceVersions get 410 Expired. Default 1000. */
  historyLimit?: number;
  /** BOOKMARK period for watches that allow bookmarks. Default 1000 ms. */
  bookmarkIntervalMs?: number;
  /** `gitVersion` of `/version`. Default v1.30.0 (v1.29.0 without admission policies). */
  gitVersion?: string;
  /** Bearer token the server demands; default a random one. */
  token?: string;
  /** Refuse namespaced creates into a namespace that does not exist (404), as the real server does. Default false. */
  requireExistingNamespace?: boolean;
  /** Start with default, kube-system, kube-public and kube-node-lease, as a real cluster. Default true. */
  systemNamespaces?: boolean;
}

export interface RestartOptions {
  /** Runs while nothing listens: change objects here to prove no change is lost across the outage. */
  whileDown?: (server: KubernetesApiTestServer) => void | Promise<void>;
  /** How long the server stays down (after whileDown). Default 0. */
  downForMs?: number;
  /**
   * Keep the event history, so watches can resume from an old resourceVersion. Default false: like a
   * real API server, whose watch cache starts empty, a watch from before the restart gets 410 Expired.
   */
  keepHistory?: boolean;
}

export interface OpenWatchSummary {
  path: string;
  resourceVersion: string | undefined;
  allowBookmarks: boolean;
}

export class KubernetesApiTestServer {
  readonly token: string;
  private readonly registry = new ResourceRegistry();
  private readonly store: ObjectStore;
  private readonly watches: WatchHub;
  private readonly router: RequestRouter;
  /** Tokens and the TokenReview API; RBAC grants and the SubjectAccessReview API. */
  readonly tokens = new TokenAuthority();
  readonly access = new AccessAuthority();
  private readonly faults = new FaultInjector();
  private readonly requestLog: RecordedRequest[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly pendingDelays = new Map<NodeJS.Timeout, () => void>();
  private bookmarkIntervalMs: number;
  private server: Server | undefined;
  private boundPort: number | undefined;

  constructor(options: KubernetesApiTestServerOptions = {}) {
    const policies = options.validatingAdmissionPolicies ?? true;
    this.token = options.token ?? randomBytes(16).toString('hex');
    this.bookmarkIntervalMs = options.bookmarkIntervalMs ?? 1000;
    builtInResourceTypes({ validatingAdmissionPolicies: policies }).forEach((type) =>
      this.registry.register(type),
    );
    this.store = new ObjectStore(this.registry, {
      historyLimit: options.historyLimit ?? 1000,
      requireExistingNamespace: options.requireExistingNamespace ?? false,
    });
    this.watches = new WatchHub(this.store, () => this.bookmarkIntervalMs);
    this.store.observe(this.watches);
    this.router = new RequestRouter({
      registry: this.registry,
      store: this.store,
      watches: this.watches,
      token: this.token,
      gitVersion: options.gitVersion ?? (policies ? 'v1.30.0' : 'v1.29.0'),
      serverAddress: () => `127.0.0.1:${this.port}`,
      tokens: this.tokens,
      access: this.access,
    });
    if (options.systemNamespaces ?? true) {
      for (const name of ['default', 'kube-node-lease', 'kube-public', 'kube-system']) {
        this.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
      }
    }
  }

  // ---- lifecycle -------------------------------------------------------------------------------

  /** Listens on 127.0.0.1; port 0 (the default) picks a free one. */
  async start(port = 0): Promise<void> {
    if (this.server) throw new Error('the test API server is already started');
    const server = createServer((request, response) => {
      this.handle(request, response).catch((error: unknown) => {
        if (response.headersSent) response.destroy();
        else sendStatusError(response, new ApiStatusError(500, `test API server failure: ${String(error)}`));
      });
    });
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('unexpected server address');
    this.boundPort = address.port;
    this.server = server;
  }

  /** Stops listening and cuts every connection: open watches end abruptly, hung requests die. */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    this.watches.dropAll();
    for (const [timer, release] of this.pendingDelays) {
      clearTimeout(timer);
      release();
    }
    this.pendingDelays.clear();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    server.closeAllConnections();
    await closed;
  }

  /** An API server restart: down (every connection cut, connections refused), then up on the same port. */
  async restart(options: RestartOptions = {}): Promise<void> {
    const port = this.port;
    await this.stop();
    await options.whileDown?.(this);
    if (options.downForMs) await new Promise((resolve) => setTimeout(resolve, options.downForMs));
    if (!options.keepHistory) this.store.expireHistory();
    await this.start(port);
  }

  get port(): number {
    if (this.boundPort === undefined) throw new Error('the test API server was never started');
    return this.boundPort;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** A KubeConfig for the real client: plain HTTP (hence skipTLSVerify) and this server's token. */
  kubeConfig(): KubeConfig {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(this.kubeConfigYaml());
    return kubeConfig;
  }

  /** The same configuration as a kubeconfig file, for processes started with `--kubeconfig FILE`. */
  kubeConfigYaml(): string {
    return testServerKubeConfigYaml(this.url, this.token);
  }

  // ---- objects, through the same store and watch events as HTTP ------------------------------

  /** The current global resourceVersion (the last write's). */
  get resourceVersion(): string {
    return String(this.store.resourceVersion);
  }

  /** Creates an object; a namespaced one without namespace goes to `default`. Status is kept as given. */
  create<Input extends ObjectInput>(object: Input): ApiObject {
    const json = toJsonObject(object, 'object');
    const [type, version] = this.typeOf(json);
    return toApiObject(this.store.create(type, version, json, undefined, true));
  }

  /** Replaces an object (409 Conflict if it names a stale resourceVersion); status kept unless given. */
  update<Input extends ObjectInput>(object: Input): ApiObject {
    const json = toJsonObject(object, 'object');
    const [type, version] = this.typeOf(json);
    const metadata = objectField(json, 'metadata');
    const name = stringField(metadata, 'name') ?? '';
    const namespace = type.namespaced ? (stringField(metadata, 'namespace') ?? 'default') : undefined;
    return toApiObject(this.store.update(type, version, namespace, name, json, 'object', true));
  }

  /** A JSON merge patch (RFC 7386) of the object. */
  patch(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    name: string,
    mergePatch: object,
  ): ApiObject {
    const type = this.registry.byKind(apiVersion, kind);
    const patch = toJsonObject(mergePatch, 'patch');
    const version = splitApiVersion(apiVersion)[1];
    return toApiObject(
      this.store.patch(type, version, namespace, name, 'application/merge-patch+json', patch),
    );
  }

  /** A JSON merge patch of `.status` only, as a controller writes `/status`. */
  patchStatus(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    name: string,
    status: object,
  ): ApiObject {
    const type = this.registry.byKind(apiVersion, kind);
    return toApiObject(this.store.mergeStatus(type, namespace, name, toJsonObject(status, 'status')));
  }

  /** Deletes and returns the last state; namespaces take their contents, CRDs their objects with them. */
  delete(apiVersion: string, kind: string, namespace: string | undefined, name: string): ApiObject {
    return toApiObject(this.store.delete(this.registry.byKind(apiVersion, kind), namespace, name));
  }

  get(apiVersion: string, kind: string, namespace: string | undefined, name: string): ApiObject | undefined {
    const found = this.store.get(this.registry.byKind(apiVersion, kind), namespace, name);
    return found && toApiObject(found);
  }

  /** Objects of a kind, in one namespace or (namespace undefined) everywhere. */
  list(apiVersion: string, kind: string, namespace?: string): ApiObject[] {
    const type = this.registry.byKind(apiVersion, kind);
    return this.store.list(type, new ObjectFilter(namespace, undefined, undefined)).map(toApiObject);
  }

  // ---- fault injection -------------------------------------------------------------------------

  /** The next `times` matching requests get a Status with `status` (e.g. 500, 403, 410) instead of an answer. */
  failNext(rule: FailureRule): void {
    this.faults.failNext(rule);
  }

  /** The next `times` matching requests are accepted and never answered (until stop or restart). */
  hangNext(rule: HangRule = {}): void {
    this.faults.hangNext(rule);
  }

  /** The next `times` matching requests are answered after `ms`. */
  delayNext(rule: DelayRule): void {
    this.faults.delayNext(rule);
  }

  /** Destroys the sockets of open watches mid-stream (the client sees a premature close). Returns how many. */
  dropWatches(matcher: WatchMatcher = {}): number {
    const watches = this.watches.matching(matcher);
    watches.forEach((watch) => watch.drop());
    return watches.length;
  }

  /** Ends open watches properly, as the server's watch timeout does. Returns how many. */
  closeWatchesCleanly(matcher: WatchMatcher = {}): number {
    const watches = this.watches.matching(matcher);
    watches.forEach((watch) => watch.endCleanly());
    return watches.length;
  }

  /** Compacts the event history: a watch from any resourceVersion before now gets 410 Expired. */
  expireHistory(): void {
    this.store.expireHistory();
  }

  setHistoryLimit(events: number): void {
    this.store.setHistoryLimit(events);
  }

  setBookmarkInterval(ms: number): void {
    this.bookmarkIntervalMs = ms;
  }

  // ---- introspection ---------------------------------------------------------------------------

  /** Every request received, oldest first. */
  /** TCP connections clients hold open to this server right now (hung requests included). */
  get openConnections(): number {
    return this.sockets.size;
  }
  get requests(): readonly RecordedRequest[] {
    return [...this.requestLog];
  }

  clearRequests(): void {
    this.requestLog.length = 0;
  }

  openWatches(matcher: WatchMatcher = {}): OpenWatchSummary[] {
    return this.watches.matching(matcher).map(({ path, resourceVersion, allowBookmarks }) => ({
      path,
      resourceVersion,
      allowBookmarks,
    }));
  }

  /** Resolves once `count` matching watches are open; rejects after `timeoutMs`. */
  waitForWatches(matcher: WatchMatcher = {}, count = 1, timeoutMs = 3000): Promise<void> {
    return this.watches.waitFor(matcher, count, timeoutMs);
  }

  // ---- request handling ------------------------------------------------------------------------

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const record: RecordedRequest = {
      method: request.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      watch: ['true', '1'].includes(url.searchParams.get('watch') ?? '') || url.pathname.includes('/watch/'),
      contentType: request.headers['content-type'],
      at: Date.now(),
    };
    this.requestLog.push(record);
    // A watch never finishes while open; its status is known once the headers are out.
    const noteStatus = () => {
      if (response.headersSent) record.status = response.statusCode;
    };
    response.on('finish', noteStatus);
    response.on('close', noteStatus);
    const delay = this.faults.takeDelay(record);
    if (delay > 0) {
      const stillRunning = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => {
          this.pendingDelays.delete(timer);
          resolve(true);
        }, delay);
        this.pendingDelays.set(timer, () => resolve(false));
      });
      if (!stillRunning) return;
    }
    // A hung request keeps its socket (tracked in `sockets`) until stop() destroys it.
    if (this.faults.takeHang(record)) return;
    const failure = this.faults.takeFailure(record);
    if (failure) {
      request.resume();
      const message =
        failure.message ?? `injected failure (${failure.status}) for ${record.method} ${record.path}`;
      sendStatusError(response, new ApiStatusError(failure.status, message, failure.reason));
      return;
    }
    await this.router.handle(request, response, url);
  }

  private typeOf(json: JsonObject): [ResourceType, string] {
    const apiVersion = stringField(json, 'apiVersion');
    const kind = stringField(json, 'kind');
    if (!apiVersion || !kind)
      throw new Error('objects handed to the test API server need apiVersion and kind');
    return [this.registry.byKind(apiVersion, kind), splitApiVersion(apiVersion)[1]];
  }
}
