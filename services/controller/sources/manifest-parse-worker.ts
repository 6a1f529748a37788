import { parentPort, workerData } from 'node:worker_threads';
import { parseManifest, type ParseManifestOptions } from './manifest-parsing';

// The body of the worker thread that parses large manifests (isolated-parsing.ts): it parses the
// one text it was given and posts the result back.

interface ParseRequest {
  file: string;
  content: string;
  options: ParseManifestOptions;
}

const request = workerData as ParseRequest;
parentPort?.postMessage(parseManifest(request.file, request.content, request.options));
