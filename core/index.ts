/**
 * The public surface of the core. Plugins import from here only, never from core internals.
 */
export { definePlugin, PASS } from './plugin.js';
export type {
  PluginDefinition,
  PluginHooks,
  GatewayApp,
  AppServices,
  RouteDefinition,
  ResponseHead,
  UpstreamAttempt,
  EventStream,
  Step,
  MaybePromise,
} from './plugin.js';
export { GatewayContext } from './context.js';
export type { ContextVars, Outcome, Timings } from './context.js';
export { reply, isReply } from './reply.js';
export type { Reply } from './reply.js';
export { GatewayError, Errors, defineError, isGatewayError, toGatewayError } from './errors.js';
export type { ErrorType, GatewayErrorOptions } from './errors.js';
export type { SseEvent } from './sse/sse-parser.js';
export { SseParser, serializeSse } from './sse/sse-parser.js';
export type { Target, RoutePlan } from './router/types.js';
export type { ProviderAdapter, Translator, TranslateContext, TranslatedRequest, StreamTranslator } from './providers/types.js';
export { openAICompatible } from './providers/openai.js';
export type { ModelRoute, RouteMatch } from './routes.js';
export type { Logger } from './logger.js';
export { createLogger } from './logger.js';
export { createGateway } from './gateway.js';
export type { Gateway, GatewayOptions } from './gateway.js';
export { ConfigError } from './plugin-loader.js';
export type { PluginCatalog } from './plugin-loader.js';
export { loadConfigFile, loadConfigText, resolveConfigPath, formatProblem } from './config/load.js';
export type { GatewayConfig, ConfigProblem, PipelineEntry } from './config/types.js';
export { headerValue as headerString } from './upstream/headers.js';
export { createTokenCounter } from './workers/token-counter.js';
export type { TokenCounter } from './workers/types.js';

// The control plane: store, principal, admin routes. Plugins use these, never the files behind them.
export type { Store, Collections } from './store/store.js';
export * from './store/counters.js';
export { governanceOf, rateCellKey } from './store/distributed/governance-claims.js';
export type { Governance, GovernanceClaim, GovernanceKind, GovernanceSeat, ClaimVerdict } from './store/distributed/governance-claims.js';
export { budgetPeriod, entityCounterId, budgetValkeyKey, readBudgetUsage, resetBudgetUsage } from './store/distributed/governance-budgets.js';
export type { RateTake, BudgetTake, RateSettle, BudgetSettle } from './store/distributed/governance-scripts.js';
export type { Collection, Page, ListOptions } from './store/collection.js';
export type * as Records from './store/records.js';
export { uuidv7, slugify, nowIso, isoTime, isUuid } from './store/ids.js';
export { maskSecret } from './store/secrets.js';
export { generateApiKey, hashApiKey, maskApiKey } from './store/api-key-hash.js';
export { newApiKey } from './store/api-key-record.js';
export type { NewApiKey } from './store/api-key-record.js';
export type { Principal } from './auth/principal.js';
export { isOrgKey } from './auth/principal.js';
export * as Scopes from './auth/scopes.js';
export { adminRoutes, authorize, assertVisible, defineAdminRoute } from './admin/route.js';
export { listPage } from './admin/list.js';
export { crudRoutes, versionedRoutes, versionedItem, versionedItemFields, type CrudBase, type CrudBuilder, type CrudRoute, type VersionedSpec } from './admin/crud.js';
export type { AdminRouteDef, AdminInput, AdminRouteMeta, AnyAdminRoute } from './admin/route.js';
export { AdminErrors } from './admin/errors.js';
export { findWorkspace, defaultWorkspace } from './admin/workspaces.js';
export * as S from './admin/schemas.js';
export { maskSecrets } from './admin/audit.js';
export { quietWrite, isNoRoom } from './store/write-failures.js';
export { StoreErrors } from './store/errors.js';
export type { StoreCapacity } from './store/capacity.js';
// Distributed mode: the shared backends, the fault count every user of Valkey adds to, and the
// versioned PostgreSQL migrations of each component.
export type { Distributed } from './store/distributed/connections.js';
export { Outage, sharedStateFaults } from './store/distributed/faults.js';
export type { SharedStateFaults } from './store/distributed/faults.js';
export { shareBreakersThrough } from './store/distributed/breakers-sync.js';
export type { SharedBreakers } from './store/distributed/breakers-sync.js';
export { runMigrations } from './store/distributed/migrate.js';
export type { MigrationStep } from './store/distributed/migrate.js';
export { checkCustomHost, checkUpstreamUrl, OPERATOR_URL_POLICY } from './upstream/ssrf.js';
export type { CustomHostPolicy } from './upstream/ssrf.js';
export type { HostResolver, ConnectGuardOptions } from './upstream/connect-guard.js';
export { guardedConnector } from './upstream/connect-guard.js';
export { guardedLookup } from './upstream/guarded-lookup.js';
export { inputItems } from './ingress/index.js';
export type { UpgradeRoute, Upgrade } from './upgrade.js';
export { checkProviderFields } from './providers/fields.js';
export { checkConfigUpstreams } from './router/config-upstreams.js';
export { routingConfigSchema, validateRoutingConfig } from './router/config-schema.js';
export { compileSafeRegex, trySafeRegex, MAX_PATTERN_LENGTH } from './safe-regex.js';
export type { SafeRegex, SafeRegexOptions } from './safe-regex.js';
export type { CredentialResolver, ResolvedCredentials } from './router/credentials.js';
export { targetFromCredentials } from './router/credentials.js';
export { requestTimeoutHeader, forwardHeadersHeader } from './router/index.js';
export type { RouteNode, RetrySettings, StrategyMode } from './router/types.js';
export { snapshot as breakerSnapshot, resetBreakers, DEFAULT_BREAKER } from './router/breaker.js';
export type { BreakerSettings, BreakerSnapshot } from './router/breaker.js';
export { actingWorkspace, lazyCredentials, slugTarget, virtualKeyTarget, VirtualKeyErrors } from './router/resolve-targets.js';
export { retryOnMiss } from './store/distributed/replica-miss.js';
export type { Usage, Cost } from './usage/types.js';
export { costOf } from './usage/cost.js';
export { outputAllowance } from './usage/estimate.js';
export type { PricingService, ModelPrice } from './usage/cost.js';
export { factOf, conditionHolds, MCP_FACT_KEYS } from './policy/facts.js';
export type { WorkspaceFacts } from './policy/facts.js';
export { isMcpRoute, isMcpCallMethod, mcpCallOf, jsonRpcIdOf, MCP_RATE_LIMITED } from './mcp.js';
export { buildLogRecord } from './observability/log-record.js';
export type { LogRecord, GuardrailsLog } from './observability/log-record.js';
export { optionalService } from './services.js';
export { fromAjvErrors, ValidationErrors } from './validation/index.js';
export { schemaProblem } from './validation/schema-check.js';
export { newAjv, addFormats as addAjvFormats } from './validation/ajv.js';
export { nestsDeeper } from './validation/depth.js';
export { defineCheck } from './guardrail-checks.js';
export type { FeedbackEntry, FeedbackService } from './feedback.js';
export type { CheckDefinition, CheckContext, CheckResult, CheckPhase, Finding, GuardrailService, CheckOutcome, GuardrailOutcome, HookResults, TextSubject, TextVerdict } from './guardrail-checks.js';
export { MCP_CALL_METHODS } from './mcp.js';
export type { McpCall } from './mcp.js';
export { PROMPT_METADATA_KEY } from './prompt.js';
export type { PromptRef } from './prompt.js';
