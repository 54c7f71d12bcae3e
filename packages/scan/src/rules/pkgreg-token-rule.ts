import { ACCESS_TOKEN_PATTERN } from '@pkgreg/contracts';
import type { SecretLintRuleCreator } from '@secretlint/types';

// pkgreg's own access tokens as a secretlint rule beside the recommended preset, so a skill that ships
// one is flagged like any other credential (docs/risk-scan.md).

const EVERY_TOKEN = new RegExp(ACCESS_TOKEN_PATTERN.source, 'g');

const messages = {
  TOKEN: { en: (props: { TOKEN: string }) => `found a pkgreg access token: ${props.TOKEN}` },
};

export const PKGREG_TOKEN_RULE_ID = '@pkgreg/secretlint-rule-pkgreg-token';

export const pkgregTokenRule: SecretLintRuleCreator = {
  messages,
  meta: {
    id: PKGREG_TOKEN_RULE_ID,
    type: 'scanner',
    recommended: true,
    supportedContentTypes: ['text'],
  },
  create(context) {
    const t = context.createTranslator(messages);
    return {
      file(source) {
        for (const match of source.content.matchAll(EVERY_TOKEN)) {
          const start = match.index ?? 0;
          context.report({
            message: t('TOKEN', { TOKEN: match[0] }),
            range: [start, start + match[0].length],
            data: { TOKEN: match[0] },
          });
        }
      },
    };
  },
};
