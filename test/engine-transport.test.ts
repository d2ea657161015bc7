/** The transport contract's wire cases, run against both transports (`engine-transport.ts`). */
import { createHttp1Transport } from '../src/engines/transport/http1-transport.js';
import { createUndiciTransport } from '../src/engines/transport/undici-transport.js';
import { describeEngineTransportContract } from './contracts/engine-transport-contract.js';

describeEngineTransportContract('undici', createUndiciTransport);
describeEngineTransportContract('http1', createHttp1Transport);
