import { render } from 'preact';
import { App } from './App.js';
import { applyTheme, savedTheme } from './theme.js';
import './styles.css';

applyTheme(savedTheme());
render(<App />, document.getElementById('app')!);
