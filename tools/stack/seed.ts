import type { StackLayout } from './layout';

export interface DemoCredentials {
  accountId: string;
  apiKey: string;
  accessTokens: Record<string, string>;
}

/**
 * Seeds the demo account through billing-ledger's operator API. Until that API exists the stack
 * starts without a demo account (endpoints.json then carries only the operator token).
 */
export async function seedDemo(_layout: StackLayout, _operatorToken: string): Promise<DemoCredentials | undefined> {
  return undefined;
}
