// A plain byte relay (no parsing at all) for `npm run bench -- edge-guard`: what any Node process passing a
// connection's bytes both ways costs, the floor under the framing guard's own figure. Not part of the product.
// Run as `pipe-relay.ts <host> <port> <target port>`; prints {"event":"listen","port":N} when ready.
import net from 'node:net';

const [host, port, target] = process.argv.slice(2);
const server = net.createServer({ noDelay: true, allowHalfOpen: true }, (client) => {
  const upstream = net.connect({ host: '127.0.0.1', port: Number(target), noDelay: true });
  client.pipe(upstream);
  upstream.pipe(client);
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
  client.on('close', () => upstream.destroy());
});
server.listen(Number(port), host, () => {
  process.stdout.write(`${JSON.stringify({ event: 'listen', port: (server.address() as net.AddressInfo).port })}\n`);
});
process.once('SIGTERM', () => process.exit(0));
