export { csvWallTime, toCsv, type CsvCell } from './csv.js';
