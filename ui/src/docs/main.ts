/** Entry of `/docs/docs.js`: the docs pages' only script. */
import './anm-docs-search.ts';
