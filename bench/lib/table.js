// @ts-check
'use strict';

// The plain-text tables `npm run bench` prints.

/**
 * @param {unknown} value
 * @param {number} [digits]
 */
const format = (value, digits = 2) =>
  typeof value === 'number' && Number.isFinite(value) ? value.toFixed(digits) : String(value);

/**
 * @param {string} title
 * @param {string[]} header
 * @param {(string | number)[][]} rows
 */
function printTable(title, header, rows) {
  const widths = header.map((cell, column) =>
    Math.max(cell.length, ...rows.map((row) => String(row[column]).length)),
  );
  /** @param {(string | number)[]} cells */
  const line = (cells) => cells.map((cell, column) => String(cell).padEnd(widths[column])).join('  ');
  console.log(`\n${title}\n${line(header)}\n${widths.map((width) => '-'.repeat(width)).join('  ')}`);
  for (const row of rows) console.log(line(row));
}

module.exports = { format, printTable };
