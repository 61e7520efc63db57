/*
 * Loaded into a server's process (`node --import` through NODE_OPTIONS) by
 * crash tests: the first write made with an Idempotency-Key kills the
 * process with SIGKILL once the write and its kept answer are durable and
 * before the answer leaves (the diagnostics channel of http/keyedWrite.ts),
 * so the client never hears what was stored.
 */
import diagnosticsChannel from 'node:diagnostics_channel'

diagnosticsChannel.subscribe('timeledger:idempotency:kept', () => process.kill(process.pid, 'SIGKILL'))
