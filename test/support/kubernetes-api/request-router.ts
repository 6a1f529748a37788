import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiStatusError, badRequest, failureStatus, successStatus } from './api-status';
import { readBody, readObjectBody, sendJson, sendStatusError } from './http-bodies';
import { cloneJson, isJsonObject, stringField, type JsonObject, type JsonValue } from './json';
import type { DeletePreconditions, ObjectStore } from './object-store';
import { PATCH_CONTENT_TYPES } from './patches';
import { groupVersion, type ResourceRegistry, type ResourceType } from './resource-registry';
import { FieldSelectorQuery, LabelSelectorQuery, ObjectFilter } from './selectors';
import type { WatchHub } from './watch-stream';
import type { TokenAuthority } from './token-reviews';
import type { AccessAuthority } from './access-reviews';

// The REST surface: discovery documents and the resource paths
//   /api/v1[/namespaces/{ns}]/{plural}[/{name}[/status]]
//   /apis/{group}/{version}[/namespaces/{ns}]/{plural}[/{name}[/status]]
// (plus the deprecated /watch/ prefix), mapped to store operations with the status codes and Status
// bodies the real API server answers.

export interface RouterContext {
  registry: ResourceRegistry;
  store: ObjectStore;
  watches: WatchHub;
  token: string;
  gitVersion: string;
  serverAddress: () => string;
  tokens: TokenAuthority;
  access: AccessAuthority;
}

const ANONYMOUS_PATHS = new Set(['/version', '/healthz', '/livez', '/readyz']);

const notServed = () =>
  new ApiStatusError(404, 'the server could not find the requested resource', 'NotFound');
const methodNotAllowed = (method: string) =>
  new ApiStatusError(405, `the server does not allow this method on the requested resource (${method})`);

/** Where a resource request points, once the path has been taken apart. */
interface ResourceTarget {
  type: ResourceType;
  version: string;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
  legacyWatch: boolean;
}

export class RequestRouter {
  constructor(private readonly context: RouterContext) {}

  async handle(request: IncomingMessage, response: ServerResponse, url: URL): Promise<void> {
    try {
      await this.route(request, response, url);
    } catch (error) {
      if (response.headersSent) {
        response.destroy();
        return;
      }
      if (error instanceof ApiStatusError) sendStatusError(response, error);
      else sendJson(response, 500, failureStatus(500, `internal error: ${String(error)}`));
    }
  }

  private async route(request: IncomingMessage, response: ServerResponse, url: URL): Promise<void> {
    const path = url.pathname.replace(/\/+$/, '') || '/';
    if (!ANONYMOUS_PATHS.has(path) && request.headers.authorization !== `Bearer ${this.context.token}`) {
      throw new ApiStatusError(401, 'Unauthorized', 'Unauthorized');
    }
    const segments = path
      .split('/')
      .filter((segment) => segment !== '')
      .map((segment) => decodeURIComponent(segment));
    const { registry } = this.context;
    const [root, second, third, ...rest] = segments;
    if (path === '/healthz' || path === '/livez' || path === '/readyz') {
      response.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
      response.end('ok');
      return;
    }
    const isDiscovery =
      path === '/' ||
      path === '/version' ||
      (root === 'api' && segments.length <= 2) ||
      (root === 'apis' && segments.length <= 3);
    if (path === '/apis/authentication.k8s.io/v1/tokenreviews') {
      if (request.method !== 'POST') throw methodNotAllowed(request.method ?? '');
      return sendJson(response, 201, this.context.tokens.review(await readObjectBody(request)));
    }
    if (path === '/apis/authorization.k8s.io/v1/subjectaccessreviews') {
      if (request.method !== 'POST') throw methodNotAllowed(request.method ?? '');
      return sendJson(response, 201, this.context.access.review(await readObjectBody(request)));
    }
    if (isDiscovery && request.method !== 'GET') throw methodNotAllowed(request.method ?? '');
    if (path === '/') return sendJson(response, 200, { paths: this.rootPaths() });
    if (path === '/version') return sendJson(response, 200, this.versionInfo());
    if (root === 'api') {
      if (second === undefined) {
        return sendJson(response, 200, {
          kind: 'APIVersions',
          versions: ['v1'],
          serverAddressByClientCIDRs: [
            { clientCIDR: '0.0.0.0/0', serverAddress: this.context.serverAddress() },
          ],
        });
      }
      if (!registry.servesGroupVersion('', second)) throw notServed();
      const resourcePath = third === undefined ? [] : [third, ...rest];
      if (resourcePath.length === 0) return sendJson(response, 200, registry.resourceList('', second));
      return this.serveResource(request, response, url, this.target('', second, resourcePath));
    }
    if (root === 'apis') {
      if (second === undefined) return sendJson(response, 200, registry.groupList());
      const versions = registry.groups().get(second);
      if (!versions) throw notServed();
      if (third === undefined)
        return sendJson(response, 200, {
          kind: 'APIGroup',
          apiVersion: 'v1',
          ...registry.apiGroup(second, versions),
        });
      if (!versions.includes(third)) throw notServed();
      if (rest.length === 0) return sendJson(response, 200, registry.resourceList(second, third));
      return this.serveResource(request, response, url, this.target(second, third, rest));
    }
    throw notServed();
  }

  private target(group: string, version: string, segments: string[]): ResourceTarget {
    let parts = segments;
    const legacyWatch = parts[0] === 'watch';
    if (legacyWatch) parts = parts.slice(1);
    let namespace: string | undefined;
    // `/namespaces/{ns}/status` is the Namespace's own subresource, not a resource inside it.
    if (parts[0] === 'namespaces' && parts.length >= 3 && parts[2] !== 'status' && parts[2] !== 'finalize') {
      namespace = parts[1];
      parts = parts.slice(2);
    }
    const [plural, name, subresource, ...extra] = parts;
    const type = this.context.registry.byPath(group, version, plural);
    if (!type || extra.length > 0) throw notServed();
    if (namespace !== undefined && !type.namespaced) throw notServed();
    if (namespace === undefined && type.namespaced && name !== undefined) throw notServed();
    if (subresource !== undefined && (subresource !== 'status' || !type.hasStatusSubresource))
      throw notServed();
    return { type, version, namespace, name, subresource, legacyWatch };
  }

  private async serveResource(
    request: IncomingMessage,
    response: ServerResponse,
    url: URL,
    target: ResourceTarget,
  ): Promise<void> {
    const query = url.searchParams;
    if (query.has('dryRun')) throw badRequest('dryRun is not supported by the Forewarn test API server');
    const watch = target.legacyWatch || query.get('watch') === 'true' || query.get('watch') === '1';
    if (target.name === undefined || (watch && target.legacyWatch))
      return this.serveCollection(request, response, url, target, watch);
    return this.serveObject(request, response, target, target.name);
  }

  /** List, watch, create in, or delete a whole collection (a legacy `/watch/` path names one object). */
  private async serveCollection(
    request: IncomingMessage,
    response: ServerResponse,
    url: URL,
    target: ResourceTarget,
    watch: boolean,
  ): Promise<void> {
    const { store } = this.context;
    const { type, version, namespace, name } = target;
    const method = request.method ?? 'GET';
    const query = url.searchParams;
    const filter = this.filter(type, namespace, query, name);
    if (method === 'GET' && watch) {
      const resourceVersion = query.get('resourceVersion') ?? undefined;
      if (resourceVersion !== undefined && resourceVersion !== '' && !/^\d+$/.test(resourceVersion))
        throw badRequest(`invalid resource version: ${resourceVersion}`);
      const timeout = query.get('timeoutSeconds');
      this.context.watches.open(
        {
          type,
          version,
          filter,
          resourceVersion: resourceVersion === '' ? undefined : resourceVersion,
          allowBookmarks: query.get('allowWatchBookmarks') === 'true',
          timeoutSeconds: timeout !== null && /^\d+$/.test(timeout) ? Number(timeout) : undefined,
          path: url.pathname,
        },
        request,
        response,
      );
      return;
    }
    if (method === 'GET') return sendJson(response, 200, this.listResponse(type, version, filter, query));
    if (method === 'POST') {
      if (type.namespaced && namespace === undefined) throw methodNotAllowed(method);
      const body = await readObjectBody(request);
      return sendJson(
        response,
        201,
        this.present(type, version, store.create(type, version, body, namespace)),
      );
    }
    if (method === 'DELETE') {
      const deleted = store
        .deleteCollection(type, filter)
        .map((object) => this.present(type, version, object));
      return sendJson(response, 200, {
        apiVersion: groupVersion(type.group, version),
        kind: type.listKind,
        metadata: { resourceVersion: String(store.resourceVersion) },
        items: deleted,
      });
    }
    throw methodNotAllowed(method);
  }

  /** Read, replace, patch or delete one object (or its status). */
  private async serveObject(
    request: IncomingMessage,
    response: ServerResponse,
    target: ResourceTarget,
    name: string,
  ): Promise<void> {
    const { store } = this.context;
    const { type, version, namespace } = target;
    const method = request.method ?? 'GET';
    const subresource = target.subresource === 'status' ? 'status' : 'object';
    if (method === 'GET')
      return sendJson(response, 200, this.present(type, version, store.require(type, namespace, name)));
    if (method === 'PUT') {
      const body = await readObjectBody(request);
      const updated = store.update(type, version, namespace, name, body, subresource);
      return sendJson(response, 200, this.present(type, version, updated));
    }
    if (method === 'PATCH') {
      const contentType = (request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
      if (contentType === PATCH_CONTENT_TYPES.applyPatch)
        throw new ApiStatusError(415, 'server-side apply is not supported by the Forewarn test API server');
      const body = await readBody(request);
      if (body === undefined) throw badRequest('the patch body is empty');
      const patched = store.patch(type, version, namespace, name, contentType, body, subresource);
      return sendJson(response, 200, this.present(type, version, patched));
    }
    if (method === 'DELETE' && subresource === 'object') {
      const body = await readBody(request);
      const deleted = store.delete(type, namespace, name, this.preconditions(body));
      if (type.deleteReturnsObject) return sendJson(response, 200, this.present(type, version, deleted));
      const uid = stringField(isJsonObject(deleted.metadata) ? deleted.metadata : undefined, 'uid');
      return sendJson(response, 200, successStatus({ name, group: type.group, kind: type.plural, uid }));
    }
    throw methodNotAllowed(method);
  }

  private filter(
    type: ResourceType,
    namespace: string | undefined,
    query: URLSearchParams,
    name: string | undefined,
  ): ObjectFilter {
    const labelSelector = query.get('labelSelector');
    let fieldSelector = query.get('fieldSelector') ?? '';
    if (name !== undefined)
      fieldSelector = [fieldSelector, `metadata.name=${name}`].filter(Boolean).join(',');
    return new ObjectFilter(
      namespace,
      labelSelector ? LabelSelectorQuery.parse(labelSelector) : undefined,
      fieldSelector ? FieldSelectorQuery.parse(fieldSelector, type.kind) : undefined,
    );
  }

  /**
   * A list, paginated with `limit`/`continue` like the real server. Items of built-in types carry no
   * apiVersion/kind (the typed list encoding drops them); custom resource items keep theirs.
   */
  private listResponse(
    type: ResourceType,
    version: string,
    filter: ObjectFilter,
    query: URLSearchParams,
  ): JsonObject {
    const { store } = this.context;
    let items = store.listStored(type, filter);
    let listResourceVersion = store.resourceVersion;
    const continueToken = query.get('continue');
    if (continueToken) {
      const position = decodeContinueToken(continueToken);
      store.assertNotCompacted(
        position.resourceVersion,
        'The provided continue parameter is too old to display a consistent list result. ' +
          'You can start a new list without the continue parameter.',
      );
      listResourceVersion = position.resourceVersion;
      items = items.filter((object) => listKey(object) > position.after);
    }
    const metadata: JsonObject = { resourceVersion: String(listResourceVersion) };
    const limit = Number(query.get('limit') ?? '0');
    if (Number.isInteger(limit) && limit > 0 && items.length > limit) {
      const remaining = items.length - limit;
      items = items.slice(0, limit);
      metadata.continue = encodeContinueToken(listResourceVersion, listKey(items[items.length - 1]));
      metadata.remainingItemCount = remaining;
    }
    return {
      apiVersion: groupVersion(type.group, version),
      kind: type.listKind,
      metadata,
      items: items.map((object) => {
        const shown = this.present(type, version, cloneJson(object));
        if (!type.builtIn) return shown;
        const { apiVersion: _apiVersion, kind: _kind, ...withoutTypeMeta } = shown;
        return withoutTypeMeta;
      }),
    };
  }

  private preconditions(body: JsonValue | undefined): DeletePreconditions {
    const preconditions = isJsonObject(body) ? body.preconditions : undefined;
    if (!isJsonObject(preconditions)) return {};
    return {
      uid: stringField(preconditions, 'uid'),
      resourceVersion: stringField(preconditions, 'resourceVersion'),
    };
  }

  private present(type: ResourceType, version: string, object: JsonObject): JsonObject {
    return { ...object, apiVersion: groupVersion(type.group, version), kind: type.kind };
  }

  private rootPaths(): string[] {
    const paths = ['/api', '/api/v1', '/apis', '/healthz', '/livez', '/readyz', '/version'];
    for (const [group, versions] of this.context.registry.groups()) {
      paths.push(`/apis/${group}`, ...versions.map((version) => `/apis/${group}/${version}`));
    }
    return paths.sort();
  }

  private versionInfo(): JsonObject {
    const match = /^v(\d+)\.(\d+)/.exec(this.context.gitVersion);
    return {
      major: match?.[1] ?? '1',
      minor: match?.[2] ?? '0',
      gitVersion: this.context.gitVersion,
      gitCommit: '0000000000000000000000000000000000000000',
      gitTreeState: 'clean',
      buildDate: '2024-01-01T00:00:00Z',
      goVersion: 'go1.22.0',
      compiler: 'gc',
      platform: 'linux/amd64',
    };
  }
}

function listKey(object: JsonObject): string {
  const metadata = isJsonObject(object.metadata) ? object.metadata : undefined;
  return `${stringField(metadata, 'namespace') ?? ''}/${stringField(metadata, 'name') ?? ''}`;
}

function encodeContinueToken(resourceVersion: number, after: string): string {
  return Buffer.from(JSON.stringify({ rv: resourceVersion, start: after })).toString('base64url');
}

function decodeContinueToken(token: string): { resourceVersion: number; after: string } {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (isJsonObject(decoded) && typeof decoded.rv === 'number' && typeof decoded.start === 'string')
      return { resourceVersion: decoded.rv, after: decoded.start };
  } catch {
    // fall through to the error below
  }
  throw badRequest('continue key is not valid: incorrect encoded start resourceVersion');
}
