import { exitDraftModeHandler } from '../../../../../../src/next';

export const GET = exitDraftModeHandler();
