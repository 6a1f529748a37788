// A strict reader of the XML subset the JUnit writer emits (declaration, elements, attributes,
// escaped text), for tests: no npm package ships a JUnit XSD, so the report is read back into a
// tree here, refusing anything a conforming XML parser would refuse in that subset (unbalanced or
// misnested tags, a raw `<` or a bare `&` in text or attributes, duplicate attributes, control
// characters), and the tests assert the JUnit structure on the tree.

export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
// eslint-disable-next-line no-control-regex
const FORBIDDEN_CHARACTERS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F]/;

function unescape(text: string, where: string): string {
  if (FORBIDDEN_CHARACTERS.test(text)) throw new Error(`control character in ${where}`);
  if (text.includes('<')) throw new Error(`raw < in ${where}`);
  return text.replace(/&([^;]*);?/g, (match, name: string) => {
    if (!match.endsWith(';') || !(name in ENTITIES)) throw new Error(`bare & in ${where}: ${match}`);
    return ENTITIES[name];
  });
}

function parseAttributes(source: string, element: string): Record<string, string> {
  const attributes: Record<string, string> = {};
  const rest = source.replace(/\s+([A-Za-z_][\w.-]*)="([^"]*)"/g, (_match, name: string, value: string) => {
    if (name in attributes) throw new Error(`duplicate attribute ${name} on <${element}>`);
    attributes[name] = unescape(value, `${element}@${name}`);
    return '';
  });
  if (rest.trim() !== '') throw new Error(`malformed attributes on <${element}>: ${rest}`);
  return attributes;
}

export function parseXml(xml: string): XmlElement {
  const declaration = /^<\?xml version="1\.0" encoding="UTF-8"\?>\n/;
  if (!declaration.test(xml)) throw new Error('missing XML declaration');
  const body = xml.replace(declaration, '');
  const root: XmlElement = { name: '#document', attributes: {}, children: [], text: '' };
  const stack: XmlElement[] = [root];
  const tag = /<(\/?)([A-Za-z_][\w.-]*)((?:\s+[A-Za-z_][\w.-]*="[^"]*")*)\s*(\/?)>/g;
  let position = 0;
  for (const match of body.matchAll(tag)) {
    const top = stack[stack.length - 1];
    top.text += unescape(body.slice(position, match.index), `text of <${top.name}>`);
    position = match.index + match[0].length;
    const [, closing, name, attributeText, selfClosing] = match;
    if (closing) {
      if (top.name !== name) throw new Error(`</${name}> closes <${top.name}>`);
      stack.pop();
      continue;
    }
    const element: XmlElement = {
      name,
      attributes: parseAttributes(attributeText, name),
      children: [],
      text: '',
    };
    top.children.push(element);
    if (!selfClosing) stack.push(element);
  }
  if (body.slice(position).trim() !== '') throw new Error('text after the last tag');
  if (stack.length !== 1) throw new Error(`unclosed <${stack[stack.length - 1].name}>`);
  if (root.children.length !== 1 || root.text.trim() !== '') throw new Error('not exactly one root element');
  return root.children[0];
}
