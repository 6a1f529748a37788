import pino, { type Logger, type LevelWithSilent } from 'pino';

// Structured JSON logs, one line per event, with a level (pino). Secrets never reach a log: the
// redact paths below cover the fields that could carry them, and callers log references, not data.

export type { Logger };

export { LOG_LEVELS, isLogLevel } from './log-levels';

export interface LoggerOptions {
  service: 'controller' | 'webhook' | 'cli';
  level?: LevelWithSilent;
  /** Where lines go; defaults to stdout. Tests pass a stream to read the lines back. */
  destination?: NodeJS.WritableStream;
}

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: options.service },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: {
        paths: [
          '*.token',
          '*.password',
          '*.key',
          '*.tls.key',
          '*.privateKey',
          '*.authorization',
          'data',
          '*.data',
        ],
        censor: '[secret]',
      },
    },
    options.destination ?? process.stdout,
  );
}

/** A logger that drops everything, for tests that do not read logs. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
