/**
 * The acp-tck v1 requirement ids (agentclientprotocol/acp-tck, src/tck/v1/requirements.py) and
 * whether they apply to zcode-acp: MANDATORY always; CAPABILITY when zcode-acp advertises the
 * capability; ADVISORY optional. requirements.test.ts checks that every applicable id has
 * exactly one test named by it.
 */
export type Tier = "MANDATORY" | "CAPABILITY" | "ADVISORY";

export interface Requirement {
  id: string;
  tier: Tier;
  /** false: the capability is not advertised (the kit skips it) */
  applies: boolean;
  note?: string;
}

const req = (id: string, tier: Tier, applies = true, note?: string): Requirement => ({ id, tier, applies, ...(note ? { note } : {}) });

export const REQUIREMENTS: readonly Requirement[] = [
  req("ACP-TRANSPORT-001", "MANDATORY"),
  req("ACP-TRANSPORT-002", "MANDATORY"),
  req("ACP-JSONRPC-001", "MANDATORY"),
  req("ACP-JSONRPC-002", "MANDATORY"),
  req("ACP-JSONRPC-003", "MANDATORY"),
  req("ACP-JSONRPC-004", "ADVISORY"),
  req("ACP-JSONRPC-005", "ADVISORY"),
  req("ACP-INIT-001", "MANDATORY"),
  req("ACP-INIT-002", "MANDATORY"),
  req("ACP-INIT-003", "MANDATORY"),
  req("ACP-INIT-004", "ADVISORY"),
  req("ACP-SCHEMA-001", "MANDATORY"),
  req("ACP-SESSION-001", "MANDATORY"),
  req("ACP-SESSION-002", "MANDATORY"),
  req("ACP-PROMPT-001", "MANDATORY"),
  req("ACP-PROMPT-002", "MANDATORY"),
  req("ACP-PROMPT-003", "ADVISORY"),
  req("ACP-CANCEL-001", "MANDATORY"),
  req("ACP-CANCEL-002", "MANDATORY"),
  req("ACP-LOAD-001", "CAPABILITY"),
  req("ACP-LOAD-002", "CAPABILITY"),
  req("ACP-LOAD-003", "ADVISORY"),
  req("ACP-RESUME-001", "CAPABILITY"),
  req("ACP-RESUME-002", "CAPABILITY"),
  req("ACP-LIST-001", "CAPABILITY"),
  req("ACP-LIST-002", "CAPABILITY"),
  req("ACP-DELETE-001", "CAPABILITY", false, "session/delete is not advertised"),
  req("ACP-DELETE-002", "ADVISORY", false, "session/delete is not advertised"),
  req("ACP-CLOSE-001", "CAPABILITY"),
  req("ACP-CLOSE-002", "CAPABILITY"),
  req("ACP-ADDDIRS-001", "CAPABILITY", false, "additionalDirectories is not advertised"),
  req("ACP-MODES-001", "CAPABILITY"),
  req("ACP-MODES-002", "CAPABILITY"),
  req("ACP-CONFIG-001", "CAPABILITY"),
  req("ACP-CONFIG-002", "CAPABILITY"),
  req("ACP-CONFIG-003", "MANDATORY"),
  req("ACP-PROMPTCAP-001", "CAPABILITY"),
  req("ACP-PROMPTCAP-002", "CAPABILITY"),
  req("ACP-PROMPTCAP-003", "CAPABILITY"),
  req("ACP-AUTH-001", "ADVISORY"),
  req("ACP-AUTH-002", "MANDATORY"),
  req("ACP-AUTH-003", "CAPABILITY"),
  req("ACP-AUTH-004", "CAPABILITY", false, "auth.logout is not advertised"),
  req("ACP-AUTH-005", "ADVISORY", false, "authMethods is not empty"),
  req("ACP-CLIENTCAP-001", "MANDATORY"),
  req("ACP-CLIENTCAP-002", "MANDATORY"),
  req("ACP-CLIENTCAP-003", "MANDATORY"),
  req("ACP-EXT-001", "MANDATORY"),
  req("ACP-META-001", "ADVISORY"),
  req("ACP-ERROR-001", "ADVISORY"),
  req("ACP-SHUTDOWN-001", "ADVISORY"),
];
