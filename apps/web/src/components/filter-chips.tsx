import type { PackageFilters } from '@pkgreg/contracts';
import { hasFilters, type ListState, listStateToSearch } from '../list-query.js';

// Filter chips for the list and the search (issue 20): each chip is a link to the same page with that
// filter set or unset, so the filters live in the URL like the sort and the page. A filter set from
// elsewhere (a tag or an owner linked from a package page) shows as a chip that removes it.

type FilterName = keyof PackageFilters;

interface Chip {
  name: FilterName;
  value: string | boolean;
  label: string;
}

const GROUPS: Array<{ label: string; chips: Chip[] }> = [
  {
    label: 'Kind',
    chips: [
      { name: 'kind', value: 'skill', label: 'Skills' },
      { name: 'kind', value: 'composite', label: 'Composites' },
      { name: 'kind', value: 'workflow', label: 'Workflows' },
      { name: 'kind', value: 'app', label: 'Apps' },
    ],
  },
  {
    label: 'Works with',
    chips: [
      { name: 'agent', value: 'claude-code', label: 'Claude Code' },
      { name: 'agent', value: 'codex', label: 'Codex' },
      { name: 'agent', value: 'cursor', label: 'Cursor' },
      { name: 'agent', value: 'gemini-cli', label: 'Gemini CLI' },
    ],
  },
  {
    label: 'Trust',
    chips: [
      { name: 'verified', value: true, label: 'Verified publisher' },
      { name: 'risk', value: 'none', label: 'No known risk' },
      { name: 'risk', value: 'low', label: 'Low risk at most' },
      { name: 'status', value: 'active', label: 'Hide deprecated' },
    ],
  },
];

/** Labels of the filters no chip above offers (or another value of one), shown to be removed. */
const OTHER_LABELS: Record<FilterName, string> = {
  kind: 'Kind',
  category: 'Category',
  tag: 'Tag',
  agent: 'Works with',
  license: 'License',
  verified: 'Verified',
  status: 'Status',
  risk: 'Risk at most',
  owner: 'Owner',
};

function without(filters: PackageFilters, name: FilterName): PackageFilters {
  const next = { ...filters };
  delete next[name];
  return next;
}

export function FilterChips(props: { state: ListState; q: string }) {
  const { state, q } = props;
  const { filters } = state;
  const href = (next: PackageFilters) => `/${listStateToSearch({ ...state, page: 1, filters: next }, q)}`;
  const offered = (name: FilterName, value: unknown) =>
    GROUPS.some((group) => group.chips.some((chip) => chip.name === name && chip.value === value));
  const others = (Object.entries(filters) as Array<[FilterName, string | boolean]>).filter(
    ([name, value]) => !offered(name, value),
  );

  return (
    <div class="filter-bar" data-testid="filter-chips">
      {GROUPS.map((group) => (
        <fieldset class="filter-group" key={group.label}>
          <legend class="filter-group-label">{group.label}</legend>
          {group.chips.map((chip) => {
            const on = filters[chip.name] === chip.value;
            return (
              <a
                key={`${chip.name}=${String(chip.value)}`}
                class={on ? 'filter-chip is-on' : 'filter-chip'}
                href={href(on ? without(filters, chip.name) : { ...filters, [chip.name]: chip.value })}
                aria-current={on ? 'true' : undefined}
                data-testid={`filter-${chip.name}-${String(chip.value)}`}
              >
                {chip.label}
              </a>
            );
          })}
        </fieldset>
      ))}
      {others.length > 0 || hasFilters(filters) ? (
        <fieldset class="filter-group">
          <legend class="visually-hidden">Active filters</legend>
          {others.map(([name, value]) => (
            <a
              key={name}
              class="filter-chip is-on"
              href={href(without(filters, name))}
              aria-label={`Remove the filter ${OTHER_LABELS[name]}: ${String(value)}`}
              data-testid={`filter-remove-${name}`}
            >
              {OTHER_LABELS[name]}: {String(value)} <span aria-hidden="true">×</span>
            </a>
          ))}
          <a class="filter-clear" href={href({})} data-testid="filter-clear">
            Clear filters
          </a>
        </fieldset>
      ) : null}
    </div>
  );
}
