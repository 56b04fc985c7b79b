import { Component, type ComponentChildren } from 'preact';
import { Problem } from './Problem.js';

/** Keeps one broken view from blanking the console; shows the failure with its correlation id. */
export class ErrorBoundary extends Component<{ children: ComponentChildren; resetKey: string }, { error?: unknown }> {
  override state: { error?: unknown } = {};

  override componentDidCatch(error: unknown): void {
    this.setState({ error });
  }

  override componentDidUpdate(previous: { resetKey: string }): void {
    if (previous.resetKey !== this.props.resetKey && this.state.error) this.setState({ error: undefined });
  }

  override render() {
    return this.state.error ? <Problem error={this.state.error} title="This view failed" /> : this.props.children;
  }
}
