import { render } from 'preact';
import { App } from './app.js';
import { startRouter } from './router.js';
import './styles.css';

startRouter();
const root = document.getElementById('app');
if (root) render(<App />, root);
