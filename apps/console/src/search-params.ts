import { parseSearchWith } from '@tanstack/react-router';

/**
 * Reads a URL's search values as the router's default does (JSON where a value is JSON), except a value that reads
 * as a number only by losing what was typed: an order reference such as `00012345` or `1E345678` (hex digits) would
 * become 12345 or Infinity and no longer find its order. Such a value stays the string in the URL; a number that
 * reads back as itself (`?page=2`) is still a number.
 */
export function parseSearchValue(value: string): unknown {
  const parsed: unknown = JSON.parse(value);
  if (typeof parsed === 'number' && String(parsed) !== value) throw new Error('kept as typed');
  return parsed;
}

export const parseSearch = parseSearchWith(parseSearchValue);
