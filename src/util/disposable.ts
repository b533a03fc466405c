/**
 * What a subscription returns: `dispose()` ends it, and a second call does nothing. The shape of
 * the ACP SDK's and vscode-jsonrpc's registrations; the host's event subscriptions
 * (`HostSubscription`) have the same method, asynchronous because it unsubscribes on the host.
 * Import it: the global `Disposable` of @types/node is the `Symbol.dispose` one.
 */
export interface Disposable {
  dispose(): void;
}
