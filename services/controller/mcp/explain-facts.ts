// What an error message says, read once before the rules run (explain-rules.ts). Everything here
// comes from the caller's own text, so echoing it back in a reason discloses nothing.

export interface MessageFacts {
  text: string;
  /** `exceeded quota: compute, ...` and `failed quota: compute: ...` name the quota. */
  quotaName?: string;
  /** Quota resources the message names: `requests.memory`, `limits.cpu`, `count/secrets`, `pods`. */
  resourceNames: string[];
  /** `dial tcp 10.0.0.5:5432` gives address 10.0.0.5 and port 5432. */
  address?: string;
  port?: string;
  /** Names in quotes or brackets: webhooks, policies, Gatekeeper constraints, PodSecurity levels. */
  quotedNames: string[];
  /** "connection refused": usually nothing listens, rarely a policy (those drop packets). */
  connectionRefused: boolean;
}

const QUOTA_NAME = /(?:exceeded|failed) quota: ([a-z0-9](?:[-a-z0-9.]*[a-z0-9])?)/i;
const QUOTA_RESOURCE = /\b((?:requests|limits)\.[a-z][-a-z0-9]*|count\/[a-z0-9][-a-z0-9.]*)\b/gi;
const REQUESTED_LIST = /requested: ((?:[^=,\s]+=[^,\s]+,?)+)/i;
const ADDRESS_AND_PORT =
  /\b((?:\d{1,3}\.){3}\d{1,3}|\[[0-9a-f:]+\]|[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*):(\d{2,5})\b/i;
const QUOTED = /"([^"\n]{1,253})"|'([^'\n]{1,253})'|\[([^\]\n]{1,253})\]/g;
// Bounded so a pasted log of megabytes cannot make the regular expressions slow.
export const MAX_MESSAGE_LENGTH = 16_384;

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

export function readMessageFacts(message: string): MessageFacts {
  const text = message.slice(0, MAX_MESSAGE_LENGTH);
  const requested = REQUESTED_LIST.exec(text)?.[1] ?? '';
  const requestedNames = requested
    .split(',')
    .map((entry) => entry.split('=')[0])
    .filter((name) => name !== '');
  const namedResources = [...text.matchAll(QUOTA_RESOURCE)].map((match) => match[1].toLowerCase());
  const addressMatch = ADDRESS_AND_PORT.exec(text);
  const quotedNames = [...text.matchAll(QUOTED)]
    .map((match) => (match[1] ?? match[2] ?? match[3]).trim())
    .filter((name) => name !== '');
  return {
    text,
    quotaName: QUOTA_NAME.exec(text)?.[1],
    resourceNames: unique([...requestedNames, ...namedResources]),
    address: addressMatch?.[1],
    port: addressMatch?.[2],
    quotedNames: unique(quotedNames),
    connectionRefused: /connection refused|ECONNREFUSED/i.test(text),
  };
}

function escapeForRegExp(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Whether the message contains the name as a whole token (not as part of a longer name). */
export function messageNames(facts: MessageFacts, name: string): boolean {
  if (name.length < 3) return false;
  return new RegExp(`(^|[^A-Za-z0-9.-])${escapeForRegExp(name)}($|[^A-Za-z0-9-]|\\.(?![A-Za-z0-9]))`).test(
    facts.text,
  );
}
