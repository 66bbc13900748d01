use torchnative_rng::*;
fn main() {
    let mut g = CpuGenerator::new(32);
    let m = dropout_mask(&mut g, 40, 0.25).unwrap();
    println!("{:?}", m.iter().map(|&b| b as u8).collect::<Vec<_>>());
    println!("{:?}", draw_order(&[8, 5], &[1, 8]));
}
