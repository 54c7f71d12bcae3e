import { ancestorFolders, type FolderNode, type TreeNode } from '../file-tree.js';
import { formatBytes } from '../format.js';
import { FileIcon, FolderIcon, LinkIcon } from './icons.js';

// The folder as nested lists: folders are <details> (native, keyboard and screen reader friendly), files
// are links that open the viewer through the URL. Big folders start collapsed except on the open file's
// path, so a skill of 2,000 files stays usable.

/** Up to this many files, every folder starts open. */
const OPEN_ALL_UP_TO = 60;

interface TreeProps {
  current: string | null;
  /** Folders shown open: all of them, or those holding the open file. */
  open: ReadonlySet<string> | 'all';
  hrefFor: (path: string) => string;
}

function Node(props: TreeProps & { node: TreeNode }) {
  const { node, current, hrefFor } = props;
  if (node.kind === 'folder') {
    const open = props.open === 'all' || props.open.has(node.path);
    return (
      <li class="tree-folder">
        <details open={open}>
          <summary>
            <FolderIcon class="tree-icon" />
            <span class="tree-name">{node.name}</span>
            <span class="tree-meta">
              {node.fileCount} {node.fileCount === 1 ? 'file' : 'files'}
            </span>
          </summary>
          <Children folder={node} current={current} open={props.open} hrefFor={hrefFor} />
        </details>
      </li>
    );
  }
  const { file } = node;
  const isCurrent = node.path === current;
  return (
    <li class="tree-file">
      <a
        href={hrefFor(node.path)}
        class={isCurrent ? 'tree-link is-current' : 'tree-link'}
        aria-current={isCurrent ? 'page' : undefined}
        data-keep-scroll
        data-path={node.path}
      >
        {file.linkTarget !== null ? <LinkIcon class="tree-icon" /> : <FileIcon class="tree-icon" />}
        <span class="tree-name">{node.name}</span>
      </a>
      <span class="tree-meta">
        {file.linkTarget !== null ? (
          <span class="tree-tag" title={`Symbolic link to ${file.linkTarget}`}>
            → {file.linkTarget}
          </span>
        ) : null}
        {file.executable ? <span class="tree-tag">executable</span> : null}
        {file.linkTarget === null ? <span>{formatBytes(file.size)}</span> : null}
      </span>
    </li>
  );
}

function Children(props: TreeProps & { folder: FolderNode }) {
  return (
    <ul class="tree-list">
      {props.folder.children.map((child) => (
        <Node
          key={child.path}
          node={child}
          current={props.current}
          open={props.open}
          hrefFor={props.hrefFor}
        />
      ))}
    </ul>
  );
}

export function FileTree(props: {
  root: FolderNode;
  current: string | null;
  hrefFor: (path: string) => string;
}) {
  return (
    <div class="tree" data-testid="file-tree">
      <Children
        folder={props.root}
        current={props.current}
        open={props.root.fileCount <= OPEN_ALL_UP_TO ? 'all' : new Set(ancestorFolders(props.current ?? ''))}
        hrefFor={props.hrefFor}
      />
    </div>
  );
}
