import { draftModeHandler } from '../../../../../src/next';
import { api } from '../../../lib/blog';

// Preview links: /api/draft?token=<createPreviewLink's token>.
export const GET = draftModeHandler(api);
