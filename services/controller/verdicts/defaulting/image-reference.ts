// Which pull policy the API server gives a container without one: `Always` when the image's tag is
// `latest`, or when it names neither tag nor digest (the tag then defaults to `latest`), else
// `IfNotPresent` — also for a reference the server's parser rejects (pkg/util/parsers.ParseImageName
// answers an empty tag then). The grammar is the container image reference's (distribution/reference).

import { ownEntry } from '../../../model/own-entry';

const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const HOST = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[a-fA-F0-9:]+\\])`;
const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const NAME = `(?:${HOST}(?::[0-9]+)?/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*`;
const TAG = '[\\w][\\w.-]{0,127}';
const DIGEST = '([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*):([0-9a-fA-F]{32,})';
const REFERENCE = new RegExp(`^(${NAME})(?::(${TAG}))?(?:@${DIGEST})?$`);
/** A bare 64-hex-digit name is an image ID, which the parser refuses as a repository name. */
const IMAGE_ID = /^[a-f0-9]{64}$/;
const DIGEST_LENGTHS: Readonly<Record<string, number>> = { sha256: 64, sha384: 96, sha512: 128 };
const NAME_MAX_LENGTH = 255;

/** The tag the server's parser reads from an image reference: '' when invalid or digest only. */
export function imageTag(image: string): string {
  if (IMAGE_ID.test(image)) return '';
  const match = REFERENCE.exec(image);
  if (!match) return '';
  const [, name, tag, algorithm, encoded] = match;
  const firstSlash = name.indexOf('/');
  // Without a registry host, the repository name must be lowercase (docker.io/library/...).
  const first = firstSlash === -1 ? name : name.slice(0, firstSlash);
  const hasDomain =
    firstSlash !== -1 && (/[.:]/.test(first) || first === 'localhost' || first.toLowerCase() !== first);
  const remote = hasDomain ? name.slice(firstSlash + 1) : name;
  if (remote.toLowerCase() !== remote) return '';
  const normalized = hasDomain ? name : `docker.io/${firstSlash === -1 ? 'library/' : ''}${name}`;
  if (normalized.length > NAME_MAX_LENGTH) return '';
  if (algorithm !== undefined && ownEntry(DIGEST_LENGTHS, algorithm) !== encoded.length) return '';
  if (tag !== undefined) return tag;
  return algorithm === undefined ? 'latest' : '';
}

export function defaultPullPolicy(image: unknown): 'Always' | 'IfNotPresent' {
  return typeof image === 'string' && imageTag(image) === 'latest' ? 'Always' : 'IfNotPresent';
}
