import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { isRecord } from '../../../model/kubernetes';
import { errorMessage } from '../../../model/error-message';

// Raw list/watch transport on top of client-node's KubeConfig (which applies the cluster's CA,
// client certificates, tokens and proxies). client-node's own Watch awaits the response headers
// before it hands out its AbortController, so a watch the server never answers cannot be cancelled;
// here every request is abortable and has a deadline.

export class KubernetesApiError extends Error {
  constructor(
    message: string,
    readonly statusCode: number | undefined,
    readonly reason?: string,
  ) {
    super(message);
  }
}

export interface StreamHandlers {
  onLine(line: string): void;
  /** Called once: with no error for a clean end of the stream, else with the failure. */
  onEnd(error?: Error): void;
}

export class KubernetesTransport {
  constructor(readonly kubeConfig: KubeConfig) {}

  get server(): string {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster)
      throw new KubernetesApiError('the kubeconfig has no current cluster; set a context', undefined);
    return cluster.server.replace(/\/$/, '');
  }

  private async open(path: string, signal: AbortSignal): Promise<http.IncomingMessage> {
    const url = new URL(this.server + path);
    const options: https.RequestOptions = { method: 'GET', headers: { Accept: 'application/json' } };
    await this.kubeConfig.applyToHTTPSOptions(options);
    const transport = url.protocol === 'http:' ? http : https;
    return new Promise((resolve, reject) => {
      const request = transport.request(url, { ...options, signal }, resolve);
      request.on('error', reject);
      request.end();
    });
  }

  /** GET returning parsed JSON; non-2xx answers become KubernetesApiError with the Status message. */
  async getJson(path: string, timeoutMs = 30_000, parentSignal?: AbortSignal): Promise<unknown> {
    const signals = [AbortSignal.timeout(timeoutMs), ...(parentSignal ? [parentSignal] : [])];
    const signal = AbortSignal.any(signals);
    let response: http.IncomingMessage;
    try {
      response = await this.open(path, signal);
    } catch (error) {
      throw new KubernetesApiError(`GET ${path} failed: ${errorMessage(error)}`, undefined);
    }
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of response) chunks.push(chunk as Buffer);
    } catch (error) {
      throw new KubernetesApiError(
        `GET ${path} failed while reading: ${errorMessage(error)}`,
        response.statusCode,
      );
    }
    const body = Buffer.concat(chunks).toString('utf8');
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      throw new KubernetesApiError(
        `GET ${path} answered ${response.statusCode} with a body that is not JSON`,
        response.statusCode,
      );
    }
    const status = response.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      const message =
        isRecord(parsed) && typeof parsed.message === 'string' ? parsed.message : `HTTP ${status}`;
      const reason = isRecord(parsed) && typeof parsed.reason === 'string' ? parsed.reason : undefined;
      throw new KubernetesApiError(`GET ${path}: ${message}`, status, reason);
    }
    return parsed;
  }

  /**
   * Streams a watch: one call of onLine per line, onEnd once. Returns a function that aborts it.
   * The caller owns inactivity detection (it knows when bookmarks are due).
   */
  stream(path: string, handlers: StreamHandlers): () => void {
    const controller = new AbortController();
    let ended = false;
    const end = (error?: Error) => {
      if (ended) return;
      ended = true;
      handlers.onEnd(error);
    };
    this.open(path, controller.signal)
      .then((response) => {
        if (response.statusCode !== 200) {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            let message = `HTTP ${response.statusCode}`;
            try {
              const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
              if (isRecord(parsed) && typeof parsed.message === 'string') message = parsed.message;
            } catch {
              // keep the status line
            }
            end(new KubernetesApiError(`watch ${path}: ${message}`, response.statusCode));
          });
          response.on('error', (error) => end(error));
          return;
        }
        let buffered = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          buffered += chunk;
          let newline = buffered.indexOf('\n');
          while (newline !== -1) {
            const line = buffered.slice(0, newline).trim();
            buffered = buffered.slice(newline + 1);
            if (line) handlers.onLine(line);
            newline = buffered.indexOf('\n');
          }
        });
        response.on('end', () => {
          if (buffered.trim()) handlers.onLine(buffered.trim());
          end();
        });
        response.on('aborted', () => end(new KubernetesApiError(`watch ${path} was cut off`, undefined)));
        response.on('error', (error) => end(error));
        response.on('close', () => {
          if (!response.complete)
            end(new KubernetesApiError(`watch ${path} closed before its end`, undefined));
        });
      })
      .catch((error: Error) =>
        end(new KubernetesApiError(`watch ${path} failed: ${error.message}`, undefined)),
      );
    return () => {
      controller.abort();
      end(new KubernetesApiError('watch stopped', undefined, 'Stopped'));
    };
  }
}
