/** electron-squirrel-startup (no types published): true when this start was a Squirrel.Windows install/update/uninstall event it handled (it quits the app itself). */
declare module 'electron-squirrel-startup' {
  const handled: boolean;
  export default handled;
}
