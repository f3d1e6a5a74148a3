/**
 * Hint cards (test-time distillation, FloWright co-evolution; docs/hint-cards.md): pick a role's
 * best trajectories, have a teacher model distil them into a card under a JSON-schema grammar,
 * keep cards in the prior library (store.improve), inject them into prompts within a token
 * budget, count their uses, and distil online every K tasks (meta-distillation).
 */
export { pickExemplars, isSimulatedModel, type Exemplar, type ExemplarTurn, type PickOptions } from './exemplars.ts';
export { distillPrompt, estimateTokens, CARD_SCHEMA, CARD_LIMITS, type RoleBrief, type TeacherPrompt, type TokenCounter } from './prompt.ts';
export { distillCard, parseCardReply, newCardId, DistillError, type DistillErrorCode, type DistillCardOptions, type CardFields } from './distillCard.ts';
export { cardHints, renderCard, newestFirst, CardInjector, type HintBudget } from './inject.ts';
export { cardSession, agentRoles, onlineCheckpoint, ONLINE_DEFAULTS, type CardsConfig, type OnlineDistillConfig, type CardSessionOptions } from './session.ts';
export { exportCards, importCards, parseCardsDocument, CardsImportError, CARDS_FORMAT, CARDS_VERSION, type CardsDocument, type CardsImportErrorCode } from './exchange.ts';
export { distillFromExperiment, runsWithEvents, type DistillFromExperimentOptions } from './fromExperiment.ts';
export { cardsConfigFor, cardsConfigOf, cardHooksFor, assertCardsAvailable, replayHintsFor, CardsRequestError, DEFAULT_CARD_BUDGET, type CardsRequest, type CardsRequestErrorCode } from './hooks.ts';
