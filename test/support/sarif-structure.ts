// The structure of the SARIF 2.1.0 logs `forewarn check -o sarif` writes, as a JSON Schema (2020-12)
// for ajv. No npm package ships the OASIS schema (sarif-schema-2.1.0.json), so this is its subset for
// the objects Forewarn emits, transcribed from the standard (sections 3.11-3.33): the required
// properties, the value sets (level, version), the numeric bounds (startLine >= 1, ruleIndex >= -1),
// and no properties the standard does not define on these objects (a typo fails the test).

const message = {
  type: 'object',
  required: ['text'],
  properties: { text: { type: 'string', minLength: 1 } },
  additionalProperties: false,
} as const;

const propertyBag = { type: 'object' } as const;
const level = { enum: ['none', 'note', 'warning', 'error'] } as const;

const reportingDescriptor = {
  type: 'object',
  required: ['id'],
  properties: {
    id: { type: 'string', minLength: 1 },
    name: { type: 'string' },
    shortDescription: message,
    fullDescription: message,
    help: message,
    defaultConfiguration: {
      type: 'object',
      properties: { level, enabled: { type: 'boolean' }, rank: { type: 'number' } },
      additionalProperties: false,
    },
    properties: propertyBag,
  },
  additionalProperties: false,
} as const;

const location = {
  type: 'object',
  properties: {
    physicalLocation: {
      type: 'object',
      required: ['artifactLocation'],
      properties: {
        artifactLocation: {
          type: 'object',
          required: ['uri'],
          properties: { uri: { type: 'string', format: 'uri-reference' }, uriBaseId: { type: 'string' } },
          additionalProperties: false,
        },
        region: {
          type: 'object',
          required: ['startLine'],
          properties: { startLine: { type: 'integer', minimum: 1 } },
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
    logicalLocations: {
      type: 'array',
      items: {
        type: 'object',
        properties: { fullyQualifiedName: { type: 'string' }, kind: { type: 'string' } },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;

const result = {
  type: 'object',
  required: ['message', 'ruleId', 'level', 'locations'],
  properties: {
    ruleId: { type: 'string' },
    ruleIndex: { type: 'integer', minimum: -1 },
    level,
    message,
    locations: { type: 'array', minItems: 1, items: location },
    properties: propertyBag,
  },
  additionalProperties: false,
} as const;

export const SARIF_STRUCTURE = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  required: ['version', 'runs'],
  properties: {
    $schema: { type: 'string', format: 'uri' },
    version: { const: '2.1.0' },
    runs: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['tool'],
        properties: {
          tool: {
            type: 'object',
            required: ['driver'],
            properties: {
              driver: {
                type: 'object',
                required: ['name'],
                properties: {
                  name: { type: 'string', minLength: 1 },
                  semanticVersion: { type: 'string' },
                  rules: { type: 'array', items: reportingDescriptor },
                },
                additionalProperties: false,
              },
            },
            additionalProperties: false,
          },
          invocations: {
            type: 'array',
            items: {
              type: 'object',
              required: ['executionSuccessful'],
              properties: {
                executionSuccessful: { type: 'boolean' },
                toolExecutionNotifications: {
                  type: 'array',
                  items: {
                    type: 'object',
                    required: ['message'],
                    properties: { level, message },
                    additionalProperties: false,
                  },
                },
              },
              additionalProperties: false,
            },
          },
          results: { type: 'array', items: result },
        },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;
