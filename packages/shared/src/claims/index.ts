export * from './offers.js';
