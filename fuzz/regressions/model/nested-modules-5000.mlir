module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
module {
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
