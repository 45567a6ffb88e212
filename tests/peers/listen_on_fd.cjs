// Preloaded (`node --require tests/peers/listen_on_fd.cjs ...`) into a node server that takes only a
// port number (the npm server-everything's PORT): its server listens instead on the socket the test
// bound once and handed down as descriptor LISTEN_FD, so no port is picked for it to bind again.
"use strict";
const net = require("node:net");

const fd = Number(process.env.LISTEN_FD);
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const callback = args.find((arg) => typeof arg === "function");
  return listen.call(this, { fd }, callback);
};
