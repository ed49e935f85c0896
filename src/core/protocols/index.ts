import { classicReactProtocol } from './classic-react-protocol';
import { deepResearchProtocol } from './deep-research-protocol';
import { nativeToolProtocol } from './native-tool-protocol';
import type { Protocol, ProtocolName } from './protocol';

const protocols: Record<ProtocolName, Protocol> = {
  'deep-research': deepResearchProtocol,
  native: nativeToolProtocol,
  classic: classicReactProtocol,
};

/** The protocol with this name (runs choose one; default `deep-research`). */
export function protocolByName(name: ProtocolName | undefined): Protocol {
  return protocols[name ?? 'deep-research'];
}

export * from './protocol';
export * from './truncated-reply';
export * from './tool-call-cap';
